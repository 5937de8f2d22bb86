// SPDX-License-Identifier: LGPL-2.1-or-later
// The device cache tier (a Tier, see tier.h): a cache in each accelerator's memory, grown
// chunk by chunk while the application runs and given back under device memory pressure.
// Device-resident regions are captured as one group: each device keeps what fits in its cache,
// remainders go to peers' caches and the host per the peer schedule (core/group_placement.h).
// A flush thread then reads each region back into host memory and hands it to the next tier;
// the device copy stays, evictable, for fast restores until its slots are needed. Restore
// hints bring versions back into the cache of the device they came from.
//
// The accelerators are reached only through DeviceMemory (device_memory.h): the StarPU glue
// implements it over OpenCL and, in a CUDA build, CUDA, so nothing here depends on either.
// Host-resident regions captured with capture() pass through to the next tier.
#pragma once

#include "ckpt_backend/core/cache_pressure.h"
#include "ckpt_backend/core/device_cache.h"
#include "ckpt_backend/engine/config.h"
#include "ckpt_backend/engine/device_memory.h"
#include "ckpt_backend/engine/memory_tier.h"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hetpu::ckpt {

// A device-resident region to capture: its valid copy is at (device, base + offset).
struct DeviceSource {
    std::size_t index;  // region index in the version
    std::size_t device;
    std::uintptr_t base;
    std::uint64_t offset;
};

class DeviceTier : public MemoryTier {
public:
    DeviceTier(std::unique_ptr<DeviceMemory> devices, const DeviceTierConfig &config);
    ~DeviceTier() override;

    std::size_t device_count() const { return devices_->device_count(); }
    // Captures the given regions of a begun version from device memory as one group (see
    // Engine::capture_from_devices).
    void capture_from_devices(const Key &key, const std::vector<DeviceSource> &sources);
    // Restores region `index` into device memory at dst: device to device when this tier
    // holds it, else through a host staging buffer that `restore_to_host` fills.
    void restore_to_device(const Key &key, std::size_t index, const DeviceAddress &dst, std::uint64_t dst_size,
                           const std::function<void(void *)> &restore_to_host);
    std::size_t free_slots(std::size_t device);
    void wait_caches_ready();
    // Gives back up to `chunks` whole chunks of a device's cache now: only chunks whose
    // regions are all on the next tier already; returns the bytes given back.
    std::uint64_t shrink(std::size_t device, std::size_t chunks);

    // Tier (tier.h). attach sizes the caches and reads the link bandwidths; start runs the
    // memory (growth and pressure), flush and prefetch threads; detach frees every chunk.
    void attach(Chain &chain, std::size_t position) override;
    void start(std::vector<std::thread> &threads) override;
    void wake_all() override;
    void detach() override;
    // Host memory passes through to the next tier (captures from devices come in above).
    void accept(const RegionKey &rk, const void *src, const std::function<void(bool)> *on_reached) override;
    // Device to host copies of a ready device copy (waiting while it is being prefetched).
    bool read_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, void *dst) override;
    bool holds_locked(const RegionKey &rk) const override;
    void count_restored_locked(const RegionKey &rk, std::uint64_t bytes) override;

private:
    // A region's bytes in this tier: slot-sized segments on devices, or in host_part for
    // segments the peer schedule sent to the host.
    struct Segment {
        int device;  // or kHostMemory
        SlotRef slot;
        std::uint64_t region_offset, bytes;
    };
    struct Copy {
        std::vector<Segment> segments;
        std::unique_ptr<char[]> host_part;
        std::uint64_t order = 0;  // capture order (eviction is oldest first)
        bool on_host = false;     // flushed to the next tier (or a prefetched copy): evictable
        bool ready = false;       // every byte is in place (captured, or prefetched)
        int pins = 0;             // restores reading it
    };
    struct SegmentAddress {
        DeviceAddress where;
        std::uint64_t region_offset, bytes;
    };

    // One cache chunk for the device with the fewest (false when none is wanted).
    bool grow_one_chunk();
    // Lets the caches that gave memory back grow again after their quiet spell; true when
    // one of them wants a chunk now.
    bool resume_quiet_devices();
    double clock_s() const;
    std::vector<SegmentAddress> addresses_locked(const Copy &copy) const;
    // Copies a region held here into host memory dst (lock not held).
    void read_copy(const std::vector<SegmentAddress> &segments, char *dst);
    // Waits while the region is being prefetched; the ready copy, or nullptr.
    Copy *ready_copy_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk);
    // Runs `io` on the copy's addresses with the lock released and the copy pinned (no
    // eviction or shrink frees its slots meanwhile); what io throws is thrown, lock held.
    void with_pinned_copy_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, Copy &copy,
                                 const std::function<void(const std::vector<SegmentAddress> &)> &io);
    void free_copy_locked(std::map<RegionKey, Copy>::iterator it);
    // Evicts copies holding slots on `device` whose bytes the next tier has, in the
    // configured eviction order (core/eviction.h's order_slot_victims), until `slots` are
    // free; never one whose restore rank is below keep_rank_below. False: not enough.
    bool make_room_locked(std::size_t device, std::size_t slots, std::size_t keep_rank_below = 0);
    void memory_loop();
    // Reads the region back into host memory and hands it to the next tier; from then on
    // the device copy may be evicted.
    void flush_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, Tier &next) override;
    void prefetch_loop();

    std::unique_ptr<DeviceMemory> devices_;
    DeviceTierConfig config_;
    // Guarded by the chain's lock.
    std::vector<DeviceCache> caches_;
    std::vector<std::vector<std::uintptr_t>> chunks_;  // [device][chunk] driver handles
    std::vector<RegrowBackoff> regrow_;                // [device]: when a shrunk cache grows again
    std::chrono::steady_clock::time_point started_;
    std::map<RegionKey, Copy> copies_;
    std::vector<std::vector<double>> link_bw_;  // [from][to] bytes/s between devices
    std::vector<double> host_bw_;               // [from] bytes/s to the host
    std::uint64_t next_order_ = 0;
    std::map<std::string, std::size_t> region_home_;  // region name -> device it was last on
    std::condition_variable memory_cv_;               // chunk growth and pressure thread
};

}  // namespace hetpu::ckpt
