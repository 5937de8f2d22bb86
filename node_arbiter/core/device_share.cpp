// SPDX-License-Identifier: LGPL-2.1-or-later
// Share integral and energy split of shared devices (see device_share.h for the rules).
#include "node_arbiter/core/device_share.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hetpu::accounting {

void device_weights(uint64_t capacity, uint64_t warp_capacity, const DeviceHold *holds, size_t n, HoldWeight *out)
{
    if (n == 0)
        return;
    double sum_share = 0;
    double sum_bytes = 0;
    for (size_t i = 0; i < n; ++i) {
        const double mem = capacity > 0 ? double(holds[i].bytes) / double(capacity) : 0.0;
        const double warps = warp_capacity > 0 ? double(holds[i].warps) / double(warp_capacity) : 0.0;
        out[i].share = std::min(1.0, std::max(mem, warps));
        sum_share += out[i].share;
        sum_bytes += double(holds[i].bytes);
    }
    if (sum_share <= 0) {
        // Idle: everyone attached pays an equal part (nobody holds memory to weigh by).
        for (size_t i = 0; i < n; ++i)
            out[i].weight = 1.0 / double(n);
        return;
    }
    if (sum_share >= 1) {
        // Oversubscribed warps: the device is fully used; each pays its part of the use.
        for (size_t i = 0; i < n; ++i)
            out[i].weight = out[i].share / sum_share;
        return;
    }
    // Partly used: the unused rest goes with the reservations (memory held keeps others out
    // even while its warps sit idle), or with the shares when nobody holds memory.
    const double idle = 1.0 - sum_share;
    for (size_t i = 0; i < n; ++i) {
        const double part = sum_bytes > 0 ? double(holds[i].bytes) / sum_bytes : out[i].share / sum_share;
        out[i].weight = out[i].share + idle * part;
    }
}

void split_segment_energy(double delta_j, double segment_s, const double *weight_s, size_t n, double *out)
{
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
        sum += weight_s[i];
    // Filled (to rounding): divide by the sum itself, so the parts add up to delta_j exactly.
    const double whole = sum >= segment_s * (1 - 1e-9) ? sum : segment_s;
    for (size_t i = 0; i < n; ++i)
        out[i] = whole > 0 ? delta_j * (weight_s[i] / whole) : 0.0;
}

// ---- ShareIntegrator --------------------------------------------------------------------

void ShareIntegrator::add_device(const std::string &key, uint64_t capacity, uint64_t warp_capacity)
{
    if (key.empty())
        throw std::invalid_argument("share integrator: a device needs a key");
    if (capacity == 0)
        throw std::invalid_argument("share integrator: device " + key + " has capacity 0 (give its memory in bytes)");
    Device &d = devices_[key];
    d.capacity = capacity;
    d.warp_capacity = warp_capacity;
}

ShareIntegrator::Device &ShareIntegrator::device(const std::string &key)
{
    auto it = devices_.find(key);
    if (it == devices_.end())
        throw std::invalid_argument("share integrator: unknown device '" + key + "' (add_device it first)");
    return it->second;
}

ShareIntegrator::Holder &ShareIntegrator::attached_holder(const std::string &key, int32_t pid)
{
    Device &d = device(key);
    auto it = d.holders.find(pid);
    if (it == d.holders.end() || !it->second.attached)
        throw std::invalid_argument("share integrator: process " + std::to_string(pid) + " is not attached to " + key +
                                    " (attach it before its grants)");
    return it->second;
}

void ShareIntegrator::advance(double t)
{
    if (!std::isfinite(t))
        throw std::invalid_argument("share integrator: event time is not a finite number");
    if (!started_) {
        started_ = true;
        now_ = t;
        return;
    }
    if (t < now_)
        throw std::invalid_argument("share integrator: event at " + std::to_string(t) +
                                    " s is before the previous one (" + std::to_string(now_) +
                                    " s): sort the log by time");
    const double dt = t - now_;
    now_ = t;
    if (dt == 0)
        return;
    std::vector<DeviceHold> holds;
    std::vector<Holder *> who;
    std::vector<HoldWeight> w;
    for (auto &[key, d] : devices_) {
        holds.clear();
        who.clear();
        for (auto &[pid, h] : d.holders)
            if (h.attached) {
                holds.push_back(h.hold);
                who.push_back(&h);
            }
        if (holds.empty())
            continue;
        w.assign(holds.size(), HoldWeight{});
        device_weights(d.capacity, d.warp_capacity, holds.data(), holds.size(), w.data());
        d.any_attached_s += dt;
        for (size_t i = 0; i < who.size(); ++i) {
            who[i]->time.attached_s += dt;
            who[i]->time.share_s += w[i].share * dt;
            who[i]->time.weight_s += w[i].weight * dt;
            who[i]->segment_weight_s += w[i].weight * dt;
        }
    }
}

void ShareIntegrator::attach(double t, int32_t pid, const std::string &key)
{
    Device &d = device(key);
    advance(t);
    Holder &h = d.holders[pid];
    h.attached = true;
    h.hold.pid = pid;
}

void ShareIntegrator::detach(double t, int32_t pid, const std::string &key)
{
    Holder &h = attached_holder(key, pid);
    advance(t);
    h.attached = false;
    h.hold.bytes = 0;
    h.hold.warps = 0;
}

void ShareIntegrator::grant(double t, int32_t pid, const std::string &key, uint64_t bytes, uint64_t warps)
{
    Holder &h = attached_holder(key, pid);
    advance(t);
    h.hold.bytes += bytes;
    h.hold.warps += warps;
}

void ShareIntegrator::release(double t, int32_t pid, const std::string &key, uint64_t bytes, uint64_t warps)
{
    Holder &h = attached_holder(key, pid);
    if (bytes > h.hold.bytes || warps > h.hold.warps)
        throw std::invalid_argument("share integrator: process " + std::to_string(pid) + " releases more on " + key +
                                    " than it holds (a release without its grant?)");
    advance(t);
    h.hold.bytes -= bytes;
    h.hold.warps -= warps;
}

void ShareIntegrator::reading(double t, const std::string &key, double counter_j)
{
    Device &d = device(key);
    if (!std::isfinite(counter_j))
        throw std::invalid_argument("share integrator: the energy reading of " + key + " is not a finite number");
    advance(t);
    std::vector<Holder *> who;
    std::vector<double> weight_s;
    for (auto &[pid, h] : d.holders)
        if (h.segment_weight_s > 0) {
            who.push_back(&h);
            weight_s.push_back(h.segment_weight_s);
        }
    if (d.has_reading && counter_j >= d.reading_j && t > d.reading_t) {
        std::vector<double> parts(who.size());
        split_segment_energy(counter_j - d.reading_j, t - d.reading_t, weight_s.data(), who.size(), parts.data());
        for (size_t i = 0; i < who.size(); ++i) {
            ShareEnergy &e = who[i]->energy;
            e.joules += parts[i];
            if (e.segments++ == 0)
                e.from_j = d.reading_j;
            e.to_j = counter_j;
        }
    }
    for (Holder *h : who)
        h->segment_weight_s = 0;
    d.has_reading = true;
    d.reading_t = t;
    d.reading_j = counter_j;
}

ShareEnergy ShareIntegrator::energy_of(int32_t pid, const std::string &key) const
{
    auto d = devices_.find(key);
    if (d == devices_.end())
        return {};
    auto h = d->second.holders.find(pid);
    return h == d->second.holders.end() ? ShareEnergy{} : h->second.energy;
}

ShareTime ShareIntegrator::of(int32_t pid, const std::string &key) const
{
    auto d = devices_.find(key);
    if (d == devices_.end())
        return {};
    auto h = d->second.holders.find(pid);
    return h == d->second.holders.end() ? ShareTime{} : h->second.time;
}

double ShareIntegrator::device_attached_s(const std::string &key) const
{
    auto d = devices_.find(key);
    return d == devices_.end() ? 0.0 : d->second.any_attached_s;
}

// ---- energy ------------------------------------------------------------------------------

std::vector<double> split_energy(double joules, const std::vector<double> &weight_s)
{
    if (!std::isfinite(joules) || joules < 0)
        throw std::invalid_argument("energy split: the device's joules must be a finite number >= 0");
    if (weight_s.empty())
        throw std::invalid_argument("energy split: no process to split the device's joules among");
    double sum = 0;
    for (double w : weight_s) {
        if (!std::isfinite(w) || w < 0)
            throw std::invalid_argument("energy split: a share-time is negative or not a number");
        sum += w;
    }
    std::vector<double> out(weight_s.size());
    for (size_t i = 0; i < weight_s.size(); ++i)
        out[i] = sum > 0 ? joules * (weight_s[i] / sum) : joules / double(weight_s.size());
    return out;
}

double mean_weight(const ShareTime &t)
{
    if (!(t.attached_s > 0))
        return 0;
    return std::clamp(t.weight_s / t.attached_s, 0.0, 1.0);
}

double own_device_joules(double device_joules, double measured_s, const ShareTime &t)
{
    if (!(measured_s > 0))
        return 0;
    return device_joules * std::clamp(t.weight_s / measured_s, 0.0, 1.0);
}

}  // namespace hetpu::accounting
