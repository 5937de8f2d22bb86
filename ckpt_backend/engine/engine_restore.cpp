// SPDX-License-Identifier: LGPL-2.1-or-later
// The engine's read side (see engine.h): describing and restoring versions from the fastest
// tier that holds them, prefetching the versions a restart will ask for next, and waiting
// for a version to reach a tier.
#include "ckpt_backend/engine/engine.h"

#include "ckpt_backend/core/eviction.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hetpu::ckpt {

std::vector<RegionSpec> Engine::describe(const std::string &name, std::int64_t version)
{
    std::lock_guard<std::mutex> lock(mu_);
    Version *v = find_locked({name, version}, true);
    if (!v)
        throw Error(-ENOENT, "checkpoint '" + name + "' version " + std::to_string(version) + " exists on no tier");
    std::vector<RegionSpec> out;
    for (const RegionRecord &r : v->regions)
        out.push_back({r.region, r.size});
    return out;
}

void Engine::prefetch_hint(const std::string &name, const std::vector<std::int64_t> &order)
{
    check_name(name, "checkpoint name");
    {
        std::lock_guard<std::mutex> lock(mu_);
        hints_[name] = std::deque<std::int64_t>(order.begin(), order.end());
        // Versions that exist only on disk (an earlier run) are looked up once here, so the
        // prefetch thread never touches the disk under the lock for versions that do not
        // exist (yet): those appear through begin().
        for (std::int64_t v : order)
            find_locked({name, v}, true);
    }
    prefetch_cv_.notify_one();
    device_prefetch_cv_.notify_one();
}

void Engine::restore(const std::string &name, std::int64_t version, std::size_t index, void *dst,
                     std::uint64_t dst_size)
{
    const Key key{name, version};
    std::unique_lock<std::mutex> lock(mu_);
    Version *v = find_locked(key, true);
    if (!v)
        throw Error(-ENOENT, "checkpoint '" + name + "' version " + std::to_string(version) + " exists on no tier");
    if (index >= v->regions.size())
        throw Error(-EINVAL,
                    "version has " + std::to_string(v->regions.size()) + " regions, no index " + std::to_string(index));
    const std::uint64_t size = v->regions[index].size;
    if (dst_size != size)
        throw Error(-EINVAL, "region '" + v->regions[index].region + "' holds " + std::to_string(size) +
                                 " bytes, the destination " + std::to_string(dst_size));
    for (;;) {
        v = find_locked(key, true);
        const long long off = v->host_offset[index];
        if (off >= 0) {
            Cached &c = cached_.at(static_cast<std::size_t>(off));
            if (!is_readable(c.life.state())) {
                wait_state(lock);
                continue;
            }  // being written or prefetched
            ++c.pins;
            lock.unlock();
            std::memcpy(dst, host_base_ + off, size);
            lock.lock();
            Cached &again = cached_.at(static_cast<std::size_t>(off));
            --again.pins;
            if (again.life.state() == RegionState::Flushed)
                again.life.advance(RegionState::Ready);
            if (again.life.state() == RegionState::Ready)
                again.life.advance(RegionState::Consumed);
            stats_.restored_from_host_bytes += size;
            break;
        }
        if (restore_from_device(lock, {key, index}, dst, size))
            break;
        if (v->captured < v->regions.size() && v->declared_in_memory && !v->error) {
            wait_state(lock);  // capture of this version still in progress
            continue;
        }
        // From disk: the region file is durable once its region left the host arena.
        const Manifest one = manifest_of(key, *v);
        const std::size_t first = v->first_disk();
        lock.unlock();
        read_from_disks(first, one, index, dst);
        lock.lock();
        stats_.restored_from_disk_bytes += size;
        break;
    }
    consume_hint_locked(key, index);
    lock.unlock();
    notify_state();
}

void Engine::consume_hint_locked(const Key &key, std::size_t index)
{
    // The last region restored consumes the version's first hint.
    Version *v = find_locked(key, true);
    if (!v || index + 1 != v->regions.size())
        return;
    auto h = hints_.find(key.first);
    if (h != hints_.end()) {
        auto pos = std::find(h->second.begin(), h->second.end(), key.second);
        if (pos != h->second.end())
            h->second.erase(pos);
    }
}

void Engine::drop_hint_locked(const Key &key)
{
    auto h = hints_.find(key.first);
    if (h == hints_.end())
        return;
    auto pos = std::find(h->second.begin(), h->second.end(), key.second);
    if (pos != h->second.end())
        h->second.erase(pos);
}

Engine::HintedRegion
Engine::next_hinted_region_locked(const std::function<bool(const Key &, Version &, std::size_t)> &wanted)
{
    HintedRegion best;
    for (const auto &[name, order] : hints_)
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

Manifest Engine::manifest_of(const Key &key, const Version &v)
{
    Manifest one;
    one.name = key.first;
    one.version = key.second;
    one.checksums = v.checksums;
    one.regions = v.regions;
    return one;
}

void Engine::prefetch_loop()
{
    // Normal priority: a prefetch is on the restore's critical path.
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        if (stopping_)
            return;
        // The first hinted region that is on disk but not in the arena.
        const HintedRegion next = next_hinted_region_locked(
            [](const Key &, Version &v, std::size_t i) { return v.on_any_disk() && v.host_offset[i] < 0; });
        const Key target = next.key;
        const std::size_t target_index = next.index, target_rank = next.rank;
        if (target_rank == kNoHint) {
            prefetch_cv_.wait(lock);
            continue;
        }
        Version &v = versions_.at(target);
        const std::uint64_t size = v.regions[target_index].size;
        // Room without evicting anything needed sooner (keep ranks <= target's).
        long long off = allocate_locked(size, target_rank + 1, false);
        if (off < 0) {
            prefetch_cv_.wait(lock);
            continue;
        }
        cached_.emplace(
            static_cast<std::size_t>(off),
            Cached{target, target_index, size, RegionLifecycle(RegionState::Prefetching), 0, v.flush_order});
        v.host_offset[target_index] = off;
        const Manifest one = manifest_of(target, v);
        const std::string dir = disks_[v.first_disk()]->dir();
        ++active_prefetches_;
        lock.unlock();
        bool unreadable = false;
        try {
            read_region(dir, one, target_index, host_base_ + off);
        } catch (const Error &) {
            unreadable = true;
        }
        --active_prefetches_;
        lock.lock();
        Cached &c = cached_.at(static_cast<std::size_t>(off));
        if (unreadable) {
            // Unreadable: drop it; the restore reads the disk itself and reports the error.
            versions_.at(target).host_offset[target_index] = -1;
            arena_->release(static_cast<std::size_t>(off));
            cached_.erase(static_cast<std::size_t>(off));
            drop_hint_locked(target);
        } else {
            c.life.advance(RegionState::Ready);
            stats_.prefetched_bytes += size;
        }
        cv_.notify_all();  // a restore may be waiting for this region (lock held: we loop on)
    }
}

// ---------------------------------------------------------------------------------------
// Queries

void Engine::wait(const std::string &name, std::int64_t version, Tier tier)
{
    // The one place the public tier names meet the chain of directory tiers: Local is the
    // first, Remote the last (with only one, there is no remote tier).
    const std::size_t disk = tier == Tier::Local ? 0 : disks_.size() - 1;
    if (tier == Tier::Remote && disks_.size() < 2)
        throw Error(-EINVAL, "no remote tier configured ([remote] path)");
    const Key key{name, version};
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        Version *v = find_locked(key, true);
        if (!v)
            throw Error(-ENOENT, "checkpoint '" + name + "' version " + std::to_string(version) + " exists on no tier");
        if (v->error)
            throw Error(v->error, v->error_message);
        const bool done = tier == Tier::Device ? v->staged == v->regions.size()
                          : tier == Tier::Host ? v->captured == v->regions.size()
                                               : v->on_disk(disk);
        if (done)
            return;
        wait_state(lock);
    }
}

std::int64_t Engine::latest(const std::string &name)
{
    std::int64_t best = -1;
    {
        std::lock_guard<std::mutex> lock(mu_);
        for (const auto &[key, v] : versions_)
            if (key.first == name && !v.error && v.staged == v.regions.size() && v.declared_in_memory)
                best = std::max(best, key.second);
    }
    for (const auto &disk : disks_)
        if (auto l = latest_complete(disk->dir(), name, false))
            best = std::max(best, *l);
    if (best < 0)
        throw Error(-ENOENT, "no complete version of checkpoint '" + name + "' on any tier");
    return best;
}

void Engine::read_from_disks(std::size_t first, const Manifest &m, std::size_t index, void *dst) const
{
    std::optional<Error> first_error;
    for (std::size_t tier = first; tier < disks_.size(); ++tier) {
        try {
            read_region(disks_[tier]->dir(), m, index, dst);
            return;
        } catch (const Error &e) {
            if (!first_error)
                first_error = e;  // names the first place looked at
        }
    }
    throw *first_error;
}

void Engine::drain()
{
    std::unique_lock<std::mutex> lock(mu_);
    while (!(device_flush_queue_.empty() && device_flushes_in_flight_ == 0 && flush_queue_.empty() &&
             flushes_in_flight_ == 0 && disk_copies_idle_locked()))
        wait_state(lock);
    if (first_error_)
        throw Error(first_error_, first_error_message_);
}

}  // namespace hetpu::ckpt
