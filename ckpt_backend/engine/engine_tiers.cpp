// SPDX-License-Identifier: LGPL-2.1-or-later
// The engine's background tiers (see engine.h): the flush of captured versions to the local
// directory, their copy to the remote one, retention, and touching the host arena ahead of
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

void Engine::region_on_local_locked(std::unique_lock<std::mutex> &lock, const Key &key, Version &v)
{
    if (++v.on_local != v.regions.size() || v.error)
        return;
    Manifest m;
    m.name = key.first;
    m.version = key.second;
    m.checksums = config_.checksums;
    m.regions = v.regions;
    lock.unlock();
    std::optional<Error> failed;
    try {
        write_manifest(config_.local_dir, m, local_opts_);
    } catch (const Error &e) {
        failed = e;
    }
    if (!failed && config_.remote_dir.empty())
        apply_retention(config_.local_dir, key.first);
    lock.lock();
    Version &again = versions_.at(key);
    if (failed) {
        record_error_locked(again, *failed);
        return;
    }
    again.local_complete = true;
    if (!config_.remote_dir.empty())
        remote_queue_.push_back(key);
}

// True when the remote tier holds this version, or when its copy there is no longer
// pending: it finished (and the remote retention may have pruned it since) or failed.
// A version this process never queued for the remote tier (known from disk only) counts
// as pending only when the remote tier has nothing older, i.e. it may still be copied.
bool Engine::on_remote_or_done(const std::string &name, std::int64_t version)
{
    if (try_read_manifest(config_.remote_dir, name, version))
        return true;
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = versions_.find(Key(name, version));
        if (it != versions_.end() && (it->second.declared_in_memory || it->second.remote_queued))
            return it->second.remote_complete || it->second.error != 0;
    }
    const std::vector<std::int64_t> remote = complete_versions(config_.remote_dir, name, false);
    return !remote.empty() && version < remote.front();
}

void Engine::apply_retention(const std::string &dir, const std::string &name)
{
    if (config_.versions_to_keep <= 0)
        return;
    std::vector<std::int64_t> complete = complete_versions(dir, name, false);
    const std::size_t keep = static_cast<std::size_t>(config_.versions_to_keep);
    const bool local_with_remote = dir == config_.local_dir && !config_.remote_dir.empty();
    for (std::size_t i = 0; i + keep < complete.size(); ++i) {
        // A local version still waiting for its copy to the remote tier must stay: the copy
        // reads it. "Not on the remote tier" alone does not say that: the remote tier's own
        // retention may already have removed it there (a later version landed first), and
        // testing only the remote manifest kept such a version on the local disk for good.
        if (local_with_remote && !on_remote_or_done(name, complete[i]))
            continue;
        try {
            remove_version(dir, name, complete[i]);
        } catch (const Error &) {
            // Retention is housekeeping: the version is pruned again on the next pass.
        }
    }
}

void Engine::catch_up_remote()
{
    const std::size_t keep = static_cast<std::size_t>(std::max(config_.versions_to_keep, 0));
    for (const std::string &name : checkpoint_names(config_.local_dir)) {
        for (const std::string &dir : {config_.local_dir, config_.remote_dir})
            for (std::int64_t orphan : orphan_versions(dir, name)) {
                try {
                    remove_version(dir, name, orphan);
                } catch (const Error &) {
                    // Housekeeping: an orphan left here is retried at the next start.
                }
            }
        const std::vector<std::int64_t> local = complete_versions(config_.local_dir, name, false);
        const std::vector<std::int64_t> remote = complete_versions(config_.remote_dir, name, false);
        // What the remote tier keeps once caught up: the newest versions over both tiers.
        std::vector<std::int64_t> both;
        std::set_union(local.begin(), local.end(), remote.begin(), remote.end(), std::back_inserter(both));
        const std::int64_t oldest_kept = keep == 0 || both.size() <= keep ? INT64_MIN : both[both.size() - keep];
        {
            std::lock_guard<std::mutex> lock(mu_);
            for (auto v = local.rbegin(); v != local.rend() && *v >= oldest_kept; ++v) {
                if (std::binary_search(remote.begin(), remote.end(), *v))
                    continue;
                Version *known = find_locked({name, *v}, true);
                if (!known)
                    continue;  // removed since the scan
                known->remote_queued = true;
                remote_queue_.push_back({name, *v});
            }
        }
        apply_retention(config_.remote_dir, name);
        apply_retention(config_.local_dir, name);
    }
}

void Engine::throttle_remote(std::uint64_t bytes, std::chrono::steady_clock::time_point since) const
{
    if (config_.remote_bandwidth == 0)
        return;
    const std::chrono::duration<double> due(static_cast<double>(bytes) / static_cast<double>(config_.remote_bandwidth));
    std::this_thread::sleep_until(since + std::chrono::duration_cast<std::chrono::steady_clock::duration>(due));
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
        region_on_local_locked(lock, key, ver);
        --flushes_in_flight_;
        lock.unlock();
        notify_state();
        remote_cv_.notify_one();
        lock.lock();
    }
}

void Engine::remote_loop()
{
    lower_this_thread_priority();
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        remote_cv_.wait(lock, [&] { return stopping_ || !remote_queue_.empty(); });
        if (remote_queue_.empty())
            return;
        Key key = remote_queue_.front();
        remote_queue_.pop_front();
        ++remote_in_flight_;
        Manifest m;
        m.name = key.first;
        m.version = key.second;
        m.checksums = config_.checksums;
        m.regions = versions_.at(key).regions;
        lock.unlock();
        std::optional<Error> failed;
        try {
            std::vector<char> buf;
            const auto started = std::chrono::steady_clock::now();
            std::uint64_t copied = 0;
            for (std::size_t i = 0; i < m.regions.size(); ++i) {
                buf.resize(m.regions[i].size);
                read_region(config_.local_dir, m, i, buf.data());
                write_file_durably(config_.remote_dir, m.regions[i].file, buf.data(), buf.size(), remote_opts_);
                throttle_remote(copied += buf.size(), started);
            }
            write_manifest(config_.remote_dir, m, remote_opts_);
        } catch (const Error &e) {
            failed = e;
        }
        if (!failed) {
            apply_retention(config_.remote_dir, key.first);
            apply_retention(config_.local_dir, key.first);
        }
        lock.lock();
        Version &v = versions_.at(key);
        if (failed)
            record_error_locked(v, *failed);
        else
            v.remote_complete = true;
        --remote_in_flight_;
        lock.unlock();
        notify_state();
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
