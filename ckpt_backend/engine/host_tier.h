// SPDX-License-Identifier: LGPL-2.1-or-later
// The host cache tier (a Tier, see tier.h): an arena of host memory that takes a region in
// the time of one memcpy, so the application is blocked only for that copy, and flush threads
// that hand each captured region to the next tier. When the arena has no room (still being
// initialised, or too small for the region) a capture writes through to the next tier
// instead; when it is full of unflushed data, the capture waits for a flush. Regions hinted
// for restore are prefetched into the arena in hint order without evicting anything needed
// sooner; eviction is by restore-hint score or FIFO (core/eviction.h).
#pragma once

#include "ckpt_backend/core/arena.h"
#include "ckpt_backend/core/region_state.h"
#include "ckpt_backend/engine/memory_tier.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>

namespace hetpu::ckpt {

class HostTier : public MemoryTier {
public:
    // `bytes` of arena, 0: no cache (every capture writes through). With `incremental_init`,
    // a thread touches the arena in the background and captures use what is ready.
    HostTier(std::uint64_t bytes, bool incremental_init);
    ~HostTier() override;

    // Bytes of the arena usable now (grows during incremental initialisation).
    std::uint64_t ready_bytes() const;

    // Tier (tier.h). attach maps the arena; start runs flush_threads flush threads, the
    // prefetch thread and the touch thread.
    void attach(Chain &chain, std::size_t position) override;
    void start(std::vector<std::thread> &threads) override;
    void detach() override;
    // Copies the region into the arena, or writes it through to the next tier.
    void accept(const RegionKey &rk, const void *src, const std::function<void(bool)> *on_reached) override;
    bool read_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, void *dst) override;
    bool holds_locked(const RegionKey &rk) const override;
    // A restored region becomes consumed: evicted before regions still to be restored.
    void count_restored_locked(const RegionKey &rk, std::uint64_t bytes) override;
    // Evicts the version's prefetched copies.
    void forget_locked(const Key &key) override;

private:
    struct Cached {
        Key key;
        std::size_t index;
        std::uint64_t size;
        RegionLifecycle life;
        int pins = 0;
        std::uint64_t flush_order;
    };
    // Makes room for `size` bytes; returns the offset, or -1 when the caller must fall back
    // (write through / wait). keep_rank_below as in choose_score_victims.
    long long allocate_locked(std::uint64_t size, std::size_t keep_rank_below, bool allow_fifo_eviction);
    void evict_locked(std::size_t offset);
    // No room in the arena: the region goes straight to the next tier.
    void write_through(const RegionKey &rk, const void *src, std::uint64_t size,
                       const std::function<void(bool)> *on_reached);
    // Writes the region to the next tier; from then on it may be evicted.
    void flush_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, Tier &next) override;
    void prefetch_loop();
    void touch_loop();

    std::uint64_t bytes_;
    bool incremental_init_;
    char *base_ = nullptr;
    std::unique_ptr<Arena> arena_;
    // Guarded by the chain's lock.
    std::map<std::size_t, Cached> cached_;  // arena contents by offset
    std::map<RegionKey, std::size_t> offsets_;
};

}  // namespace hetpu::ckpt
