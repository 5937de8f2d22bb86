// SPDX-License-Identifier: LGPL-2.1-or-later
// The multi-tier checkpoint engine (no StarPU): device caches -> host cache arena -> an ordered
// chain of directory tiers (DiskTier: node-local, then remote), with background flush threads
// per tier boundary, restore-hint driven
// eviction and prefetch, and crash-consistent versions on the disk tiers.
//
// A checkpoint version is a list of regions. capture() copies one region into the host arena
// (the only time the caller is blocked) and queues it for flushing; flush threads write it to
// the first directory tier (checksum, temp name, fsync, rename) and, when every region of the
// version is there, the manifest; other threads copy complete versions on down the chain. Restores
// read from the fastest tier holding the region; regions hinted for restore are prefetched
// into the arena in hint order without evicting anything needed sooner.
//
// Thread safety: every public method may be called from any thread. Errors are thrown as
// ckpt::Error (-errno and a message).
#pragma once

#include "ckpt_backend/core/arena.h"
#include "ckpt_backend/core/cache_pressure.h"
#include "ckpt_backend/core/device_cache.h"
#include "ckpt_backend/core/eviction.h"
#include "ckpt_backend/core/manifest.h"
#include "ckpt_backend/core/region_state.h"
#include "ckpt_backend/engine/config.h"
#include "ckpt_backend/engine/device_memory.h"
#include "ckpt_backend/engine/disk_tier.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace hetpu::ckpt {

// The tiers a caller can wait for. Local and Remote are the first and the last directory tier
// (Engine::wait maps them).
enum class Tier { Device = -1, Host = 0, Local = 1, Remote = 2 };

struct RegionSpec {
    std::string name;
    std::uint64_t size;
};

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

// A device-resident region to capture: its valid copy is at (device, base + offset).
struct DeviceSource {
    std::size_t index;  // region index in the version
    std::size_t device;
    std::uintptr_t base;
    std::uint64_t offset;
};

class Engine {
public:
    // Checks the tier directories and locks the local one (an -EBUSY Error when another run
    // holds it), then starts the threads.
    // With `devices` and an enabled [device] section, each device gets a cache tier.
    static std::unique_ptr<Engine> create(const EngineConfig &config, std::unique_ptr<DeviceMemory> devices = nullptr);
    ~Engine();
    Engine(const Engine &) = delete;
    Engine &operator=(const Engine &) = delete;

    // Declares version `version` of checkpoint `name` with its regions (before capturing).
    void begin(const std::string &name, std::int64_t version, const std::vector<RegionSpec> &regions);
    // Copies region `index` (size as declared) from src; blocks only for the copy, or until a
    // flush frees room when the host arena is full of unflushed data.
    // A failed write-through is thrown here and also reported by wait() and drain().
    void capture(const std::string &name, std::int64_t version, std::size_t index, const void *src);
    // Captures the given regions of a begun version from device memory as one group: each
    // device keeps what fits in its cache, remainders go to peers' caches and the host per the
    // configured peer schedule; returns when every byte is copied (the application's source
    // buffers may change afterwards). The device flush thread then moves each region on to
    // the host tier and the disks. Requires device_tier().
    void capture_from_devices(const std::string &name, std::int64_t version, const std::vector<DeviceSource> &sources);
    bool device_tier() const { return !device_caches_.empty(); }
    // Restores region `index` straight into device memory at dst (dst_size must equal the
    // region's size): device to device from the device tier when it holds the region, else
    // from the host tier or a disk (checksums verified) through a host staging buffer.
    void restore_to_device(const std::string &name, std::int64_t version, std::size_t index, const DeviceAddress &dst,
                           std::uint64_t dst_size);
    // Free slots of a device's cache now (tests, benchmarks).
    std::size_t device_free_slots(std::size_t device);
    // Blocks until every device has allocated the chunks it will get.
    void wait_device_caches_ready();
    // Gives back up to `chunks` whole chunks of a device's cache now (what DeviceMemory::
    // pressure asks for, checked every few milliseconds): only chunks whose regions are all
    // on the host tier already; returns the bytes given back. Public for tests.
    std::uint64_t shrink_device(std::size_t device, std::size_t chunks);
    // Blocks until the version is complete on `tier` (Device: captured in a device or the
    // host cache; Host: captured in the host cache or written through).
    void wait(const std::string &name, std::int64_t version, Tier tier);
    // Copies region `index` of the version into dst (dst_size must equal the region's size),
    // verifying the checksum when it comes from a disk tier.
    void restore(const std::string &name, std::int64_t version, std::size_t index, void *dst, std::uint64_t dst_size);
    // Region sizes and names of a version (from memory, else from the newest disk manifest).
    std::vector<RegionSpec> describe(const std::string &name, std::int64_t version);
    // The order in which versions of `name` will be restored (replaces earlier hints); a
    // restore of a version consumes its first occurrence.
    void prefetch_hint(const std::string &name, const std::vector<std::int64_t> &order);
    // Newest version restorable now (captured in memory, or complete on a disk tier); an
    // -ENOENT Error when there is none.
    std::int64_t latest(const std::string &name);
    // Drains all flushes; throws the first flush error if any occurred.
    void drain();
    EngineStats stats();
    const EngineConfig &config() const { return config_; }
    // Bytes of the host arena usable now (grows during incremental initialisation).
    std::uint64_t host_ready_bytes();

private:
    using Key = std::pair<std::string, std::int64_t>;
    struct Version {
        std::uint64_t flush_order = 0;
        std::vector<RegionRecord> regions;
        std::vector<long long> host_offset;  // -1: not in the host arena
        std::vector<bool> device_staged;     // captured into the device tier
        std::size_t captured = 0, on_first_disk = 0;
        std::size_t staged = 0;               // regions captured on any tier (device or host)
        bool declared_in_memory = true;       // false: known from a disk manifest only
        bool checksums = true;                // the region records carry checksums
        std::uint32_t complete_on_disks = 0;  // bit i: complete (manifest written) on disks_[i]
        bool copy_queued = false;             // known from disk, queued at start for a copy down the chain
        bool on_disk(std::size_t tier) const { return (complete_on_disks >> tier) & 1u; }
        bool on_any_disk() const { return complete_on_disks != 0; }
        // The first directory tier holding the version complete (0 when none does yet).
        std::size_t first_disk() const
        {
            for (std::size_t i = 0; i < 32; ++i)
                if (on_disk(i))
                    return i;
            return 0;
        }
        int error = 0;
        std::string error_message;
    };
    struct Cached {
        Key key;
        std::size_t index;
        std::uint64_t size;
        RegionLifecycle life;
        int pins = 0;
        std::uint64_t flush_order;
    };

    // A region's bytes in the device tier: slot-sized segments on devices, or in host_part
    // for segments the peer schedule sent to the host.
    struct DeviceSegment {
        int device;  // or kHostMemory
        SlotRef slot;
        std::uint64_t region_offset, bytes;
    };
    struct DeviceCopy {
        std::vector<DeviceSegment> segments;
        std::unique_ptr<char[]> host_part;
        std::uint64_t order = 0;  // capture order (eviction is oldest first)
        bool on_host = false;     // flushed to the host tier (or a prefetched copy): evictable
        bool ready = false;       // every byte is in place (captured, or prefetched)
        int pins = 0;             // restores reading it
    };
    using RegionKey = std::pair<Key, std::size_t>;

    explicit Engine(const EngineConfig &config);
    void start();
    void stop();
    // capture(); `captured_locked` (when set) runs under the lock in the same critical section
    // that counts the region as captured, so what it records is visible to wait(Host).
    void capture_impl(const std::string &name, std::int64_t version, std::size_t index, const void *src,
                      const std::function<void()> *captured_locked);

    Version *find_locked(const Key &key, bool load_from_disk);
    std::size_t rank_locked(const Key &key) const;
    // Makes room for `size` bytes; returns the offset, or -1 when the caller must fall back
    // (write through / wait). keep_rank_below as in choose_score_victims.
    long long allocate_locked(std::uint64_t size, std::size_t keep_rank_below, bool allow_fifo_eviction);
    void evict_locked(std::size_t offset);
    void persist_region(const Key &key, std::size_t index, const void *data, std::uint64_t size,
                        std::uint64_t *checksum);
    // Counts a region written to the first directory tier; the last one writes the manifest
    // and queues the version for the next tier.
    void region_on_first_disk_locked(std::unique_lock<std::mutex> &lock, const Key &key, Version &v);
    // Marks a version complete on disks_[tier] and queues it for the tier after (lock held).
    void complete_on_disk_locked(const Key &key, Version &v, std::size_t tier);
    // True when disks_[tier] holds the version, or its copy there is no longer pending.
    bool copied_or_done(std::size_t tier, const std::string &name, std::int64_t version);
    void apply_retention(std::size_t tier, const std::string &name);
    // At start, for every checkpoint name on disks_[tier - 1]: removes region files without a
    // manifest (a crash between data and manifest) on both tiers, queues the versions complete
    // there but not on disks_[tier] that its retention would keep, newest first, and applies
    // retention.
    void catch_up(std::size_t tier);
    // Every directory copy queue empty and no copy running (lock held).
    bool disk_copies_idle_locked() const;
    void record_error_locked(Version &v, const Error &e);

    void step_aside_for_captures();
    void wait_state(std::unique_lock<std::mutex> &lock);
    void notify_state();  // lock not held: wakes callers waiting on cv_ and the prefetch thread
    void flush_loop();
    void copy_loop(std::size_t tier);  // copies versions from disks_[tier - 1] to disks_[tier]
    void prefetch_loop();
    void touch_loop();
    void device_memory_loop();
    // One cache chunk for the device with the fewest (false when none is wanted).
    bool grow_one_chunk();
    // Lets the caches that gave memory back grow again after their quiet spell; true when
    // one of them wants a chunk now.
    bool resume_quiet_devices();
    double device_clock_s() const;
    void device_flush_loop();
    void device_prefetch_loop();
    // Removes a version's first hint once its last region is restored.
    void consume_hint_locked(const Key &key, std::size_t index);
    // Forgets a version's hint (a prefetch found it unreadable: the restore reports why).
    void drop_hint_locked(const Key &key);
    // What both prefetch threads look for: the first hinted region, in rank order over every
    // name's hints (within a rank, region order), that `wanted` accepts. rank is kNoHint
    // when none is. `wanted` may remember details of the candidate it accepts last: that
    // one is the answer.
    struct HintedRegion {
        Key key;
        std::size_t index = 0, rank = kNoHint;
    };
    HintedRegion next_hinted_region_locked(const std::function<bool(const Key &, Version &, std::size_t)> &wanted);
    // Reads a region from disks_[first], else from the tiers after it; the error thrown names
    // disks_[first] when none can.
    void read_from_disks(std::size_t first, const Manifest &m, std::size_t index, void *dst) const;
    // The manifest of a version as the disk reads of one of its regions need it.
    static Manifest manifest_of(const Key &key, const Version &v);
    void start_devices();
    void stop_devices();
    DeviceAddress device_address(const DeviceSegment &seg) const;
    struct SegmentAddress {
        DeviceAddress where;
        std::uint64_t region_offset, bytes;
    };
    std::vector<SegmentAddress> addresses_locked(const DeviceCopy &copy) const;
    // Copies a region held in the device tier into host memory dst (lock not held).
    void read_device_copy(const std::vector<SegmentAddress> &segments, char *dst);
    void free_device_copy_locked(std::map<RegionKey, DeviceCopy>::iterator it);
    // Evicts device copies holding slots on `device` whose bytes the host tier has, in the
    // configured eviction order (core/eviction.h's order_slot_victims), until `slots` are
    // free; never one whose restore rank is below keep_rank_below. False: not enough.
    bool make_device_room_locked(std::size_t device, std::size_t slots, std::size_t keep_rank_below = 0);
    // Restores from the device tier when it holds the region; false otherwise.
    bool restore_from_device(std::unique_lock<std::mutex> &lock, const RegionKey &rk, void *dst, std::uint64_t size);

    EngineConfig config_;
    // The directory tiers in order (first: node-local, locked for this run).
    std::vector<std::unique_ptr<DiskTier>> disks_;
    char *host_base_ = nullptr;
    std::unique_ptr<Arena> arena_;

    std::mutex mu_;
    // Separate wake-ups, so that a capture wakes one flush thread and nothing else: waking
    // the prefetch or copy threads on every capture costs the application CPU time.
    std::condition_variable cv_;  // state changes, for waiting callers (wait, restore, room)
    std::condition_variable flush_cv_, prefetch_cv_;
    int state_waiters_ = 0;
    std::map<Key, Version> versions_;
    std::map<std::size_t, Cached> cached_;  // host arena contents by offset
    std::map<std::string, std::deque<std::int64_t>> hints_;
    std::deque<std::pair<Key, std::size_t>> flush_queue_;
    std::size_t flushes_in_flight_ = 0;
    std::uint64_t next_flush_order_ = 0;
    int first_error_ = 0;
    std::string first_error_message_;
    EngineStats stats_;
    bool stopping_ = false;
    std::atomic<int> active_copies_{0}, active_prefetches_{0};

    std::vector<std::thread> threads_;

    // Device tier (empty without [device] or without devices).
    std::unique_ptr<DeviceMemory> devices_;
    std::vector<DeviceCache> device_caches_;
    std::vector<std::vector<std::uintptr_t>> device_chunks_;  // [device][chunk] driver handles
    std::vector<RegrowBackoff> device_regrow_;                // [device]: when a shrunk cache grows again
    std::chrono::steady_clock::time_point devices_started_;
    std::map<RegionKey, DeviceCopy> device_copies_;
    std::vector<std::vector<double>> link_bw_;  // [from][to] bytes/s between devices
    std::vector<double> host_bw_;               // [from] bytes/s to the host
    std::deque<RegionKey> device_flush_queue_;
    std::size_t device_flushes_in_flight_ = 0;
    std::uint64_t next_device_order_ = 0;
    bool devices_growing_ = false;
    std::condition_variable device_cv_;               // device flush thread
    std::condition_variable device_memory_cv_;        // chunk growth and pressure thread
    std::condition_variable device_prefetch_cv_;      // device prefetch thread
    std::map<std::string, std::size_t> region_home_;  // region name -> device it was last on
};

}  // namespace hetpu::ckpt
