// SPDX-License-Identifier: LGPL-2.1-or-later
// The multi-tier checkpoint engine (no StarPU): one ordered chain of tiers (tier.h), by
// default device caches -> host cache arena -> node-local directory -> remote directory, each
// flushing to the next on its own threads, with restore-hint driven eviction and prefetch and
// crash-consistent versions on the directory tiers.
//
// A checkpoint version is a list of regions. capture() hands one region to the first tier
// (the host cache copies it: the only time the caller is blocked) and its flush threads move
// it down: the first directory writes it (checksum, temp name, fsync, rename) and, when every
// region of the version is there, the manifest; later directories copy complete versions.
// Restores read from the fastest tier holding the region; regions hinted for restore are
// prefetched into the memory tiers in hint order without evicting anything needed sooner.
//
// The engine knows the tiers only through Tier: which tiers exist and in what order is
// decided once, by tiers_from_config() or by the caller of create().
//
// Thread safety: every public method may be called from any thread. Errors are thrown as
// ckpt::Error (-errno and a message).
#pragma once

#include "ckpt_backend/engine/chain.h"
#include "ckpt_backend/engine/config.h"
#include "ckpt_backend/engine/device_memory.h"
#include "ckpt_backend/engine/device_tier.h"
#include "ckpt_backend/engine/disk_tier.h"
#include "ckpt_backend/engine/host_tier.h"
#include "ckpt_backend/engine/tier.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hetpu::ckpt {

struct RegionSpec {
    std::string name;
    std::uint64_t size;
};

class Engine {
public:
    // The engine the configuration describes (tiers_from_config). Checks the tier directories
    // and locks the local one (an -EBUSY Error when another run holds it), then starts the
    // threads. With `devices` and an enabled [device] section, each device gets a cache.
    static std::unique_ptr<Engine> create(const EngineConfig &config, std::unique_ptr<DeviceMemory> devices = nullptr);
    // An engine over the given tiers, fastest first (config gives the shared settings:
    // retention, checksums, flush threads, eviction, prefetch).
    static std::unique_ptr<Engine> create_with_tiers(const EngineConfig &config,
                                                     std::vector<std::unique_ptr<Tier>> tiers);
    // The tiers the configuration describes: a DeviceTier (with `devices` and [device]), the
    // HostTier ([host]), a DiskTier for [local] and one for [remote] when it is set.
    static std::vector<std::unique_ptr<Tier>> tiers_from_config(const EngineConfig &config,
                                                                std::unique_ptr<DeviceMemory> devices);
    ~Engine();
    Engine(const Engine &) = delete;
    Engine &operator=(const Engine &) = delete;

    // Declares version `version` of checkpoint `name` with its regions (before capturing).
    void begin(const std::string &name, std::int64_t version, const std::vector<RegionSpec> &regions);
    // Copies region `index` (size as declared) from src into the first tier; blocks only for
    // the copy, or until a flush frees room when the host cache is full of unflushed data.
    // A failed write-through is thrown here and also reported by wait() and drain().
    void capture(const std::string &name, std::int64_t version, std::size_t index, const void *src);
    // Captures the given regions of a begun version from device memory as one group: each
    // device keeps what fits in its cache, remainders go to peers' caches and the host per the
    // configured peer schedule; returns when every byte is copied (the application's source
    // buffers may change afterwards). The device flush thread then moves each region on to
    // the next tiers. Requires device_tier().
    void capture_from_devices(const std::string &name, std::int64_t version, const std::vector<DeviceSource> &sources);
    bool device_tier() const { return find_tier<DeviceTier>() != nullptr; }
    // Restores region `index` straight into device memory at dst (dst_size must equal the
    // region's size): device to device from the device tier when it holds the region, else
    // from the other tiers (checksums verified) through a host staging buffer.
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
    // Blocks until the version is complete on the first tier at `level` or after it: for a
    // durable tier with its manifest, for a memory tier every region captured there or
    // further down (Device: captured at all; Host: in the host cache or written through).
    void wait(const std::string &name, std::int64_t version, Tier::Level level);
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
    const EngineConfig &config() const { return chain_.config(); }
    // Bytes of the host arena usable now (grows during incremental initialisation).
    std::uint64_t host_ready_bytes();

private:
    Engine(const EngineConfig &config, std::vector<std::unique_ptr<Tier>> tiers);
    // The tier of type T in the list, nullptr when there is none (the tier-specific calls
    // above go to it).
    template <class T> T *find_tier() const
    {
        for (std::size_t t = 0; t < chain_.size(); ++t)
            if (auto *found = dynamic_cast<T *>(&chain_.tier(t)))
                return found;
        return nullptr;
    }

    Chain chain_;
};

}  // namespace hetpu::ckpt
