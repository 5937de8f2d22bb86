// SPDX-License-Identifier: LGPL-2.1-or-later
// The engine's background tiers (see engine.h): the flush of captured versions to the first
// directory tier, their copy down the chain of directory tiers, retention, and touching the host arena ahead of
// captures. Each runs on its own thread at a lower priority than the application's.
#include "ckpt_backend/engine/engine.h"

#include "ckpt_backend/core/eviction.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iterator>
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

namespace {

constexpr std::size_t kTouchChunk = 4u << 20;

void lower_this_thread_priority() { ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10); }

}  // namespace

void Engine::region_on_first_disk_locked(std::unique_lock<std::mutex> &lock, const Key &key, Version &v)
{
    if (++v.on_first_disk != v.regions.size() || v.error)
        return;
    Manifest m;
    m.name = key.first;
    m.version = key.second;
    m.checksums = config_.checksums;
    m.regions = v.regions;
    lock.unlock();
    std::optional<Error> failed;
    try {
        write_manifest(disks_.front()->dir(), m, disks_.front()->options());
    } catch (const Error &e) {
        failed = e;
    }
    if (!failed && disks_.size() == 1)
        apply_retention(0, key.first);
    lock.lock();
    Version &again = versions_.at(key);
    if (failed) {
        record_error_locked(again, *failed);
        return;
    }
    complete_on_disk_locked(key, again, 0);
}

void Engine::complete_on_disk_locked(const Key &key, Version &v, std::size_t tier)
{
    v.complete_on_disks |= 1u << tier;
    if (tier + 1 < disks_.size())
        disks_[tier + 1]->queue.push_back(key);
}

bool Engine::disk_copies_idle_locked() const
{
    for (const auto &disk : disks_)
        if (!disk->idle())
            return false;
    return true;
}

// True when disks_[tier] holds this version, or when its copy there is no longer pending:
// it finished (and that tier's retention may have pruned it since) or failed. A version this
// process never queued for that tier (known from disk only) counts as pending only when the
// tier has nothing older, i.e. it may still be copied.
bool Engine::copied_or_done(std::size_t tier, const std::string &name, std::int64_t version)
{
    const std::string &dir = disks_[tier]->dir();
    if (try_read_manifest(dir, name, version))
        return true;
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = versions_.find(Key(name, version));
        if (it != versions_.end() && (it->second.declared_in_memory || it->second.copy_queued))
            return it->second.on_disk(tier) || it->second.error != 0;
    }
    const std::vector<std::int64_t> there = complete_versions(dir, name, false);
    return !there.empty() && version < there.front();
}

void Engine::apply_retention(std::size_t tier, const std::string &name)
{
    // A version still waiting for its copy to the next tier must stay: the copy reads it.
    // "Not on the next tier" alone does not say that: the next tier's own retention may
    // already have removed it there (a later version landed first), and testing only its
    // manifest would keep such a version here for good.
    const bool has_next = tier + 1 < disks_.size();
    disks_[tier]->apply_retention(name, config_.versions_to_keep, [&](std::int64_t version) {
        return has_next && !copied_or_done(tier + 1, name, version);
    });
}

void Engine::catch_up(std::size_t tier)
{
    const DiskTier &from = *disks_[tier - 1], &to = *disks_[tier];
    const std::size_t keep = static_cast<std::size_t>(std::max(config_.versions_to_keep, 0));
    for (const std::string &name : checkpoint_names(from.dir())) {
        from.remove_orphans(name);
        to.remove_orphans(name);
        const std::vector<std::int64_t> here = complete_versions(from.dir(), name, false);
        const std::vector<std::int64_t> there = complete_versions(to.dir(), name, false);
        // What the next tier keeps once caught up: the newest versions over both tiers.
        std::vector<std::int64_t> both;
        std::set_union(here.begin(), here.end(), there.begin(), there.end(), std::back_inserter(both));
        const std::int64_t oldest_kept = keep == 0 || both.size() <= keep ? INT64_MIN : both[both.size() - keep];
        {
            std::lock_guard<std::mutex> lock(mu_);
            for (auto v = here.rbegin(); v != here.rend() && *v >= oldest_kept; ++v) {
                if (std::binary_search(there.begin(), there.end(), *v))
                    continue;
                Version *known = find_locked({name, *v}, true);
                if (!known)
                    continue;  // removed since the scan
                known->copy_queued = true;
                disks_[tier]->queue.push_back({name, *v});
            }
        }
        apply_retention(tier, name);
        apply_retention(tier - 1, name);
    }
}

void Engine::flush_loop()
{
    lower_this_thread_priority();
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        flush_cv_.wait(lock, [&] { return stopping_ || !flush_queue_.empty(); });
        if (flush_queue_.empty())
            return;
        auto [key, index] = flush_queue_.front();
        flush_queue_.pop_front();
        ++flushes_in_flight_;
        Version &v = versions_.at(key);
        const std::size_t off = static_cast<std::size_t>(v.host_offset[index]);
        Cached &c = cached_.at(off);
        ++c.pins;  // Cached regions are never evicted; the pin also keeps readers honest
        lock.unlock();
        std::uint64_t sum = 0;
        std::optional<Error> failed;
        try {
            persist_region(key, index, host_base_ + off, c.size, &sum);
        } catch (const Error &e) {
            failed = e;
        }
        lock.lock();
        Cached &again = cached_.at(off);
        --again.pins;
        // On a failed write the version is marked failed (no manifest: it never becomes a
        // complete version on disk, older ones are untouched) and its bytes become evictable
        // so the cache cannot deadlock.
        again.life.advance(RegionState::Flushed);
        Version &ver = versions_.at(key);
        ver.regions[index].checksum = sum;
        if (failed)
            record_error_locked(ver, *failed);
        else
            stats_.flushed_bytes += again.size;
        region_on_first_disk_locked(lock, key, ver);
        --flushes_in_flight_;
        lock.unlock();
        notify_state();
        if (disks_.size() > 1)
            disks_[1]->wake.notify_one();
        lock.lock();
    }
}

void Engine::copy_loop(std::size_t tier)
{
    lower_this_thread_priority();
    DiskTier &to = *disks_[tier];
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        to.wake.wait(lock, [&] { return stopping_ || !to.queue.empty(); });
        if (to.queue.empty())
            return;
        Key key = to.queue.front();
        to.queue.pop_front();
        ++to.in_flight;
        Manifest m;
        m.name = key.first;
        m.version = key.second;
        m.checksums = config_.checksums;
        m.regions = versions_.at(key).regions;
        lock.unlock();
        std::optional<Error> failed;
        try {
            to.copy_version(*disks_[tier - 1], m);
        } catch (const Error &e) {
            failed = e;
        }
        if (!failed) {
            apply_retention(tier, key.first);
            apply_retention(tier - 1, key.first);
        }
        lock.lock();
        Version &v = versions_.at(key);
        if (failed)
            record_error_locked(v, *failed);
        else
            complete_on_disk_locked(key, v, tier);
        --to.in_flight;
        lock.unlock();
        notify_state();
        if (tier + 1 < disks_.size())
            disks_[tier + 1]->wake.notify_one();
        lock.lock();
    }
}

void Engine::step_aside_for_captures()
{
    // Captures and prefetch reads are on the application's critical path, flushes are not.
    // Bounded: a flush must still progress when captures or prefetches run back to back.
    for (int i = 0; i < 200 && (active_copies_.load(std::memory_order_relaxed) > 0 ||
                                active_prefetches_.load(std::memory_order_relaxed) > 0);
         ++i)
        std::this_thread::sleep_for(std::chrono::microseconds(20));
}

void Engine::touch_loop()
{
    lower_this_thread_priority();
    const std::size_t cap = arena_->capacity();
    for (std::size_t done = 0; done < cap;) {
        // Concurrency control (seed, HiPC'22): touching competes with captures for memory
        // bandwidth, so it pauses while a capture copy is running.
        if (active_copies_.load() > 0) {
            std::this_thread::sleep_for(std::chrono::microseconds(50));
            continue;
        }
        {
            std::lock_guard<std::mutex> lock(mu_);
            if (stopping_)
                return;
        }
        const std::size_t end = std::min(cap, done + kTouchChunk);
        for (std::size_t p = done; p < end; p += 4096)
            host_base_[p] = 0;
        done = end;
        {
            std::lock_guard<std::mutex> lock(mu_);
            arena_->grow_usable(done);
        }
        notify_state();
    }
    // Here a CUDA build registers (pins) the whole arena in one serialised step
    // (cudaHostRegister); Debian's StarPU has no CUDA, so the step is compiled out.
}

// ---------------------------------------------------------------------------------------
// Restore

}  // namespace hetpu::ckpt
