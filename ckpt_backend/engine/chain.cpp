// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/engine/chain.h"

#include "ckpt_backend/core/eviction.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <optional>
#include <system_error>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace hetpu::ckpt {

void lower_this_thread_priority() { ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10); }

void Tier::read_stored(const Manifest &m, std::size_t index, void *dst) const
{
    (void)m, (void)index, (void)dst;
    throw Error(-EINVAL, label() + " stores no versions");
}

Chain::Chain(const EngineConfig &config, std::vector<std::unique_ptr<Tier>> tiers)
    : config_(config), tiers_(std::move(tiers))
{
    if (tiers_.empty() || tiers_.size() > 32)
        throw Error(-EINVAL, "a checkpoint chain needs 1 to 32 tiers, not " + std::to_string(tiers_.size()));
}

std::size_t Chain::position_of(Tier::Level level) const
{
    for (std::size_t t = 0; t < tiers_.size(); ++t)
        if (tiers_[t]->level() >= level)
            return t;
    return tiers_.size();
}

std::size_t Chain::first_durable() const
{
    for (std::size_t t = 0; t < tiers_.size(); ++t)
        if (tiers_[t]->durable())
            return t;
    return tiers_.size();
}

void Chain::start()
{
    for (; attached_ < tiers_.size(); ++attached_)
        tiers_[attached_]->attach(*this, attached_);
    try {
        for (auto &t : tiers_)
            t->start(threads_);
    } catch (const std::system_error &e) {
        stop();
        throw Error(-EAGAIN, std::string("cannot start checkpoint threads: ") + e.what());
    }
}

void Chain::stop()
{
    {
        std::unique_lock<std::mutex> lock(mu);
        // Flushes finish first: the data was promised durable.
        while (!idle_locked())
            wait_state(lock);
        stopping = true;
    }
    state.notify_all();
    for (auto &t : tiers_)
        t->wake_all();
    for (std::thread &t : threads_)
        t.join();
    threads_.clear();
    for (std::size_t t = 0; t < attached_ && t < tiers_.size(); ++t)
        tiers_[t]->detach();
    attached_ = 0;
}

bool Chain::idle_locked() const
{
    return std::all_of(tiers_.begin(), tiers_.end(), [](const auto &t) { return t->idle_locked(); });
}

Version *Chain::find_locked(const Key &key, bool load_from_durable)
{
    auto it = versions.find(key);
    if (it != versions.end())
        return &it->second;
    if (!load_from_durable)
        return nullptr;
    // Known only from a manifest (an earlier run): the first durable tier that has one.
    std::optional<Manifest> found;
    std::size_t position = 0;
    for (; position < tiers_.size() && !found; ++position)
        if (tiers_[position]->durable())
            found = tiers_[position]->find_manifest(key);
    if (!found)
        return nullptr;
    --position;
    const std::size_t n = found->regions.size();
    Version v;
    v.declared_in_memory = false;
    v.regions = found->regions;
    v.checksums = found->checksums;
    v.deepest.assign(n, -1);
    v.reached.assign(tiers_.size(), 0);
    // On the first durable tier every region has come down that far; a copy found only
    // further down says nothing of the tiers before it.
    if (position == first_durable()) {
        v.deepest.assign(n, static_cast<int>(position));
        for (std::size_t t = 0; t <= position; ++t)
            v.reached[t] = n;
    }
    v.complete = 1u << position;
    v.flush_order = 0;  // older than anything this run writes
    return &versions.emplace(key, std::move(v)).first->second;
}

Version &Chain::begun_locked(const RegionKey &rk)
{
    const Key &key = rk.first;
    Version *v = find_locked(key, false);
    if (!v || !v->declared_in_memory)
        throw Error(-ENOENT, "checkpoint '" + key.first + "' version " + std::to_string(key.second) + " was not begun");
    if (rk.second >= v->regions.size())
        throw Error(-EINVAL, "region index " + std::to_string(rk.second) + " is out of range or captured twice");
    return *v;
}

Version &Chain::declare_locked(const Key &key, Version v)
{
    v.deepest.assign(v.regions.size(), -1);
    v.reached.assign(tiers_.size(), 0);
    return versions[key] = std::move(v);
}

std::size_t Chain::rank_locked(const Key &key) const
{
    auto it = hints.find(key.first);
    if (it == hints.end())
        return kNoHint;
    auto pos = std::find(it->second.begin(), it->second.end(), key.second);
    return pos == it->second.end() ? kNoHint : static_cast<std::size_t>(pos - it->second.begin());
}

void Chain::reached_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, std::size_t position)
{
    (void)lock;
    Version &v = versions.at(rk.first);
    int &deepest = v.deepest[rk.second];
    for (std::size_t t = static_cast<std::size_t>(deepest + 1); t <= position; ++t)
        ++v.reached[t];
    deepest = std::max(deepest, static_cast<int>(position));
}

void Chain::complete_locked(const Key &key, Version &v, std::size_t position)
{
    v.complete |= 1u << position;
    if (position + 1 < tiers_.size())
        tiers_[position + 1]->upstream_complete_locked(key);
}

void Chain::record_error_locked(Version &v, const Error &e)
{
    if (!v.error) {
        v.error = e.code();
        v.error_message = e.what();
    }
    if (!first_error) {
        first_error = e.code();
        first_error_message = e.what();
    }
}

Chain::HintedRegion
Chain::next_hinted_region_locked(const std::function<bool(const Key &, Version &, std::size_t)> &wanted)
{
    HintedRegion best;
    best.rank = kNoHint;
    for (const auto &[name, order] : hints)
        for (std::size_t rank = 0; rank < order.size() && rank < best.rank; ++rank) {
            const Key key{name, order[rank]};
            Version *v = find_locked(key, false);
            if (!v)
                continue;
            std::size_t i = 0;
            while (i < v->regions.size() && !wanted(key, *v, i))
                ++i;
            if (i < v->regions.size()) {
                best = {key, i, rank};
                break;  // this name's later ranks come after it
            }
        }
    return best;
}

void Chain::consume_hint_locked(const Key &key, std::size_t index)
{
    Version *v = find_locked(key, true);
    if (v && index + 1 == v->regions.size())
        drop_hint_locked(key);
}

void Chain::drop_hint_locked(const Key &key)
{
    auto h = hints.find(key.first);
    if (h == hints.end())
        return;
    auto pos = std::find(h->second.begin(), h->second.end(), key.second);
    if (pos != h->second.end())
        h->second.erase(pos);
}

bool Chain::held_after_locked(std::size_t position, const RegionKey &rk, const Version &v) const
{
    for (std::size_t t = position + 1; t < tiers_.size(); ++t) {
        if (tiers_[t]->durable())
            return v.complete != 0;
        if (tiers_[t]->holds_locked(rk))
            return true;
    }
    return false;
}

bool Chain::read_after_locked(std::unique_lock<std::mutex> &lock, std::size_t position, const RegionKey &rk, void *dst)
{
    for (std::size_t t = position + 1; t < tiers_.size(); ++t) {
        if (!tiers_[t]->durable()) {
            if (tiers_[t]->read_locked(lock, rk, dst))
                return true;
            continue;
        }
        const Version *v = find_locked(rk.first, false);
        if (!v || v->complete == 0)
            return false;
        const Manifest m = manifest_of(rk.first, *v);
        const std::size_t first = v->first_complete(t);
        lock.unlock();
        try {
            read_durable(first, m, rk.second, dst);
        } catch (...) {
            lock.lock();
            throw;
        }
        lock.lock();
        return true;
    }
    return false;
}

void Chain::read_durable(std::size_t first, const Manifest &m, std::size_t index, void *dst) const
{
    std::optional<Error> first_failure;
    for (std::size_t t = first; t < tiers_.size(); ++t) {
        if (!tiers_[t]->durable())
            continue;
        try {
            tiers_[t]->read_stored(m, index, dst);
            return;
        } catch (const Error &e) {
            if (!first_failure)
                first_failure = e;  // names the first place looked at
        }
    }
    if (!first_failure)
        throw Error(-ENOENT, "checkpoint '" + m.name + "' version " + std::to_string(m.version) +
                                 " is on no durable tier (configure [local] path)");
    throw *first_failure;
}

Manifest Chain::manifest_of(const Key &key, const Version &v)
{
    Manifest one;
    one.name = key.first;
    one.version = key.second;
    one.checksums = v.checksums;
    one.regions = v.regions;
    return one;
}

void Chain::wait_state(std::unique_lock<std::mutex> &lock)
{
    ++state_waiters;
    state.wait(lock);
    --state_waiters;
}

void Chain::notify_state()
{
    state.notify_all();
    for (auto &t : tiers_)
        t->notify();
}

void Chain::step_aside_for_captures() const
{
    // Bounded: a flush must still progress when captures or prefetches run back to back.
    for (int i = 0; i < 200 && (active_copies.load(std::memory_order_relaxed) > 0 ||
                                active_prefetches.load(std::memory_order_relaxed) > 0);
         ++i)
        std::this_thread::sleep_for(std::chrono::microseconds(20));
}

}  // namespace hetpu::ckpt
