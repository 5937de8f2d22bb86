// SPDX-License-Identifier: LGPL-2.1-or-later
// The state the checkpoint engine's tiers share (see tier.h): the ordered tier list, the
// versions with how far each region has gone down the list, restore hints, statistics and
// errors, under one lock. The Engine (engine.h) is the public face over it; tiers reach each
// other only through it, by position.
#pragma once

#include "ckpt_backend/core/manifest.h"
#include "ckpt_backend/engine/config.h"
#include "ckpt_backend/engine/tier.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hetpu::ckpt {

struct EngineStats {
    std::uint64_t captured_bytes = 0, written_through_bytes = 0;
    std::uint64_t restored_from_host_bytes = 0, restored_from_disk_bytes = 0;
    std::uint64_t prefetched_bytes = 0, evicted_bytes = 0, flushed_bytes = 0;
    std::uint64_t capture_waits = 0;  // captures that waited for a flush to free space
    double capture_lock_wait_max_s = 0, capture_lock_wait_total_s = 0;  // time to get the engine lock
    // Device tier. Captures of device-resident regions: bytes kept in the device's own cache,
    // sent to a peer's cache, and sent to the host by the peer schedule (all before the
    // application resumes); then what the device flush moved to the host tier afterwards.
    std::uint64_t device_local_bytes = 0, device_peer_bytes = 0, device_to_host_at_capture_bytes = 0;
    std::uint64_t device_flushed_bytes = 0, device_evicted_bytes = 0, restored_from_device_bytes = 0;
    std::uint64_t restored_into_device_bytes = 0;      // restores written straight into device memory
    std::uint64_t device_prefetched_bytes = 0;         // hinted versions read back into a device cache
    std::uint64_t peer_schedules = 0;                  // group captures that called the peer scheduler
    double peer_schedule_time_s = 0;                   // bottleneck time of the last schedule (seconds)
    double device_capture_copy_s = 0;                  // time group captures spent copying (total)
    std::uint64_t device_cache_bytes = 0;              // device cache memory allocated so far, all devices
    std::uint64_t device_chunk_refusals = 0;           // chunks a device refused as the cache first grew
    std::uint64_t device_pressure_released_bytes = 0;  // cache memory given back under device memory pressure
    std::uint64_t device_pressure_evicted_bytes = 0;   // flushed device copies dropped to give it back
    std::uint64_t device_regrown_bytes = 0;            // cache memory taken again once the pressure was over
    bool device_caches_growing = false;                // chunks still being allocated
};

// A checkpoint version as the chain tracks it.
struct Version {
    std::uint64_t flush_order = 0;
    std::vector<RegionRecord> regions;
    std::vector<int> deepest;          // [region]: the last tier position it reached, -1: none
    std::vector<std::size_t> reached;  // [tier]: regions that reached that tier or one after it
    std::uint32_t complete = 0;        // bit t: complete, manifest written, on durable tier t
    bool declared_in_memory = true;    // false: known from a manifest only
    bool checksums = true;             // the region records carry checksums
    bool copy_queued = false;          // known from a manifest, queued at start for a copy down
    int error = 0;
    std::string error_message;
    bool complete_on(std::size_t tier) const { return (complete >> tier) & 1u; }
    // The first tier holding the version complete, `none` when no tier does.
    std::size_t first_complete(std::size_t none) const
    {
        for (std::size_t t = 0; t < 32; ++t)
            if (complete_on(t))
                return t;
        return none;
    }
};

class Chain {
public:
    Chain(const EngineConfig &config, std::vector<std::unique_ptr<Tier>> tiers);

    const EngineConfig &config() const { return config_; }
    std::size_t size() const { return tiers_.size(); }
    Tier &tier(std::size_t position) const { return *tiers_[position]; }
    // The first tier of the list whose level is `level` or later (size() when none is).
    std::size_t position_of(Tier::Level level) const;
    // The first durable tier (size() when none is).
    std::size_t first_durable() const;

    // Attaches every tier, then starts their threads; stop() undoes what was done.
    void start();
    void stop();
    // Every tier idle (lock held).
    bool idle_locked() const;

    // A version by key; one known only from a durable tier's manifest is loaded when asked.
    Version *find_locked(const Key &key, bool load_from_durable);
    // The version of rk, begun in this run: an -ENOENT Error when it was not, -EINVAL when the
    // region index is out of range.
    Version &begun_locked(const RegionKey &rk);
    // A new version declared in this run (lock held), replacing any earlier entry.
    Version &declare_locked(const Key &key, Version v);
    // Position of the version in its name's restore hints, kNoHint when not hinted.
    std::size_t rank_locked(const Key &key) const;
    // Region rk has reached tier `position` (kept there, or stored durably): counts it for
    // every tier from the one it reached last down to this one, and writes the manifest
    // through `tier(position)` when it is the version's last region on a durable tier.
    void reached_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, std::size_t position);
    // Marks a version complete on durable tier `position` and tells the tier after it.
    void complete_locked(const Key &key, Version &v, std::size_t position);
    void record_error_locked(Version &v, const Error &e);

    // The first hinted region, in rank order over every name's hints (within a rank, region
    // order), that `wanted` accepts; rank is kNoHint when none is.
    struct HintedRegion {
        Key key;
        std::size_t index = 0, rank = 0;
    };
    HintedRegion next_hinted_region_locked(const std::function<bool(const Key &, Version &, std::size_t)> &wanted);
    void consume_hint_locked(const Key &key, std::size_t index);  // after the last region's restore
    void drop_hint_locked(const Key &key);  // a prefetch found it unreadable: the restore says why

    // A tier after `position` holds the region: a memory tier readable now, or a durable one.
    bool held_after_locked(std::size_t position, const RegionKey &rk, const Version &v) const;
    // Reads the region into dst from the first tier after `position` holding it; false when
    // none does. The lock is released while reading. Throws what the durable read throws.
    bool read_after_locked(std::unique_lock<std::mutex> &lock, std::size_t position, const RegionKey &rk, void *dst);
    // Reads the region from the durable tier `first`, else from the durable tiers after it;
    // the error thrown names `first` when none can (lock not held).
    void read_durable(std::size_t first, const Manifest &m, std::size_t index, void *dst) const;
    static Manifest manifest_of(const Key &key, const Version &v);

    void wait_state(std::unique_lock<std::mutex> &lock);
    void notify_state();  // lock not held: waiting callers and every tier's threads
    // Flushes and copies call it between chunks: captures and prefetch reads are on the
    // application's critical path, they are not.
    void step_aside_for_captures() const;

    // Guarded by mu.
    mutable std::mutex mu;
    std::condition_variable state;  // state changes, for waiting callers (wait, restore, room)
    int state_waiters = 0;
    std::map<Key, Version> versions;
    std::map<std::string, std::deque<std::int64_t>> hints;
    EngineStats stats;
    std::uint64_t next_flush_order = 0;
    int first_error = 0;
    std::string first_error_message;
    bool stopping = false;
    // Copies the application waits for, and prefetch reads (flushes step aside for both).
    std::atomic<int> active_copies{0}, active_prefetches{0};

private:
    EngineConfig config_;
    std::vector<std::unique_ptr<Tier>> tiers_;
    std::size_t attached_ = 0;
    std::vector<std::thread> threads_;
};

// Flush and copy threads run at a lower priority than the application: when the application
// thread wakes up to copy a checkpoint in, it preempts a flush instead of waiting for the
// flush's time slice (measured: 3-6 ms tails on a loaded 2-core node without this).
void lower_this_thread_priority();

}  // namespace hetpu::ckpt
