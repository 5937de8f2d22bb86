// SPDX-License-Identifier: LGPL-2.1-or-later
// The arbiter's share clock (see share_clock.h). Runs under the arbiter's lock on every
// grant and release: fixed arrays, no allocation, 16 devices x 64 processes at most.
#include "node_arbiter/share_clock.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include "node_arbiter/core/device_share.h"

namespace hetpu::mgb {

namespace {

ShareAccount *find_account(ShareClock &clock, int32_t pid)
{
    for (ShareAccount &a : clock.accounts)
        if (a.pid == pid)
            return &a;
    return nullptr;
}

ShareAccount *account_for(ShareClock &clock, int32_t pid)
{
    if (ShareAccount *a = find_account(clock, pid))
        return a;
    ShareAccount *free_slot = find_account(clock, 0);
    if (free_slot) {
        std::memset(free_slot, 0, sizeof *free_slot);
        free_slot->pid = pid;
    }
    return free_slot;  // null only when full, which kMaxProcesses accounts never are
}

bool attached(const ProcessEntry &p, unsigned d)
{
    return p.limit_bytes[d] > 0 || p.reserved_bytes[d] > 0 || p.in_use_warps[d] > 0;
}

std::mutex reader_mutex;
DeviceEnergyReader &energy_reader()
{
    static auto *reader = new DeviceEnergyReader;  // never destroyed: arbiters close from atexit
    return *reader;
}

// The segment of device d since its last reading, split among the accounts by their
// weight-seconds in it (device_share.h), then `counter_j` becomes the last reading.
void split_device_energy(ShareClock &clock, unsigned d, uint64_t now_ns, double counter_j)
{
    if (clock.reading_ns[d] != 0 && now_ns <= clock.reading_ns[d])
        return;  // the same instant: the next reading closes the segment
    ShareAccount *who[kMaxProcesses];
    double weight_s[kMaxProcesses], parts[kMaxProcesses];
    size_t n = 0;
    for (ShareAccount &a : clock.accounts)
        if (a.pid != 0 && a.segment_weight_s[d] > 0) {
            who[n] = &a;
            weight_s[n++] = a.segment_weight_s[d];
        }
    if (clock.reading_ns[d] != 0 &&
        counter_j >= clock.reading_j[d]) {  // below: the counter was reset; nothing to split
        accounting::split_segment_energy(counter_j - clock.reading_j[d], double(now_ns - clock.reading_ns[d]) * 1e-9,
                                         weight_s, n, parts);
        for (size_t i = 0; i < n; ++i) {
            who[i]->joules[d] += parts[i];
            if (who[i]->segments[d]++ == 0)
                who[i]->from_j[d] = clock.reading_j[d];
            who[i]->to_j[d] = counter_j;
        }
    }
    for (size_t i = 0; i < n; ++i)
        who[i]->segment_weight_s[d] = 0;
    clock.reading_ns[d] = now_ns;
    clock.reading_j[d] = counter_j;
}

void read_device_energy(ShareClock &clock, const Ledger &ledger, uint64_t now_ns)
{
    std::lock_guard<std::mutex> lock(reader_mutex);
    const DeviceEnergyReader &reader = energy_reader();
    if (!reader || now_ns == 0)
        return;
    char key[kDeviceKeyLength + 1];
    for (unsigned d = 0; d < std::min<unsigned>(ledger.ndevices, kMaxDevices); ++d) {
        const size_t len = strnlen(ledger.devices[d].key, kDeviceKeyLength);
        std::memcpy(key, ledger.devices[d].key, len);
        key[len] = '\0';
        const std::optional<double> j = reader(key);
        if (j && std::isfinite(*j))
            split_device_energy(clock, d, now_ns, *j);
    }
}

}  // namespace

void set_device_energy_reader(DeviceEnergyReader reader)
{
    std::lock_guard<std::mutex> lock(reader_mutex);
    energy_reader() = std::move(reader);
}

void share_clock_advance(ShareClock &clock, const Ledger &ledger, uint64_t now_ns)
{
    const unsigned ndevices = std::min<unsigned>(ledger.ndevices, kMaxDevices);
    if (clock.last_ns != 0 && now_ns > clock.last_ns) {
        const double dt = double(now_ns - clock.last_ns) * 1e-9;
        accounting::DeviceHold holds[kMaxProcesses];
        accounting::HoldWeight weights[kMaxProcesses];
        const ProcessEntry *who[kMaxProcesses];
        for (unsigned d = 0; d < ndevices; ++d) {
            size_t n = 0;
            for (const ProcessEntry &p : ledger.processes)
                if (p.pid > 0 && attached(p, d)) {
                    holds[n] = {p.pid, p.reserved_bytes[d], p.in_use_warps[d]};
                    who[n++] = &p;
                }
            if (n == 0)
                continue;
            const DeviceState &dev = ledger.devices[d];
            accounting::device_weights(dev.capacity(), dev.spec.max_warps(), holds, n, weights);
            for (size_t i = 0; i < n; ++i) {
                ShareAccount *a = account_for(clock, who[i]->pid);
                if (!a)
                    continue;
                a->attached_s[d] += dt;
                a->share_s[d] += weights[i].share * dt;
                a->weight_s[d] += weights[i].weight * dt;
                a->segment_weight_s[d] += weights[i].weight * dt;
                a->peers[d] = std::max<uint32_t>(a->peers[d], uint32_t(n - 1));
            }
        }
    }
    clock.last_ns = now_ns > clock.last_ns ? now_ns : clock.last_ns;
    // Accounts follow the registered processes: a new one starts at zero, a gone one (detached
    // or reclaimed as dead) is forgotten; the leaving process took its snapshot first.
    for (ShareAccount &a : clock.accounts) {
        if (a.pid == 0)
            continue;
        bool registered = false;
        for (const ProcessEntry &p : ledger.processes)
            registered = registered || p.pid == a.pid;
        if (!registered)
            std::memset(&a, 0, sizeof a);
    }
    for (const ProcessEntry &p : ledger.processes)
        if (p.pid > 0)
            account_for(clock, p.pid);
    read_device_energy(clock, ledger, clock.last_ns);
}

std::optional<ShareSnapshot> share_clock_snapshot(const ShareClock &clock, const Ledger &ledger, int32_t pid)
{
    const ShareAccount *a = nullptr;
    for (const ShareAccount &x : clock.accounts)
        if (pid > 0 && x.pid == pid)
            a = &x;
    if (!a)
        return std::nullopt;
    ShareSnapshot s;
    s.pid = pid;
    for (const ProcessEntry &p : ledger.processes)
        if (p.pid == pid)
            s.policy.assign(p.policy, strnlen(p.policy, sizeof p.policy));
    for (unsigned d = 0; d < std::min<unsigned>(ledger.ndevices, kMaxDevices); ++d) {
        if (!(a->attached_s[d] > 0))
            continue;
        ShareSnapshot::Device dev;
        dev.key.assign(ledger.devices[d].key, strnlen(ledger.devices[d].key, kDeviceKeyLength));
        dev.capacity = ledger.devices[d].capacity();
        dev.peers = a->peers[d];
        dev.attached_s = a->attached_s[d];
        dev.share_s = a->share_s[d];
        dev.weight_s = a->weight_s[d];
        dev.joules = a->joules[d];
        dev.from_j = a->from_j[d];
        dev.to_j = a->to_j[d];
        dev.segments = a->segments[d];
        s.devices.push_back(std::move(dev));
    }
    return s;
}

namespace {
std::mutex own_mutex;
std::optional<ShareSnapshot> &own_slot()
{
    static auto *slot = new std::optional<ShareSnapshot>;  // never destroyed: read from atexit
    return *slot;
}
}  // namespace

void remember_own_share(std::optional<ShareSnapshot> snapshot)
{
    std::lock_guard<std::mutex> lock(own_mutex);
    own_slot() = std::move(snapshot);
}

std::optional<ShareSnapshot> own_share()
{
    std::lock_guard<std::mutex> lock(own_mutex);
    return own_slot();
}

}  // namespace hetpu::mgb
