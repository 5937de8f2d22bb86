// SPDX-License-Identifier: LGPL-2.1-or-later
// What the memory tiers (device caches, host cache, any other tier that keeps regions in
// memory) share: the queue of regions their flush threads hand to the next tier, and the
// wake-up of their prefetch thread. A memory tier says how one region is flushed
// (flush_locked); the loop around it is here.
#pragma once

#include "ckpt_backend/engine/tier.h"
#include "ckpt_backend/engine/work_queue.h"

#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace hetpu::ckpt {

class MemoryTier : public Tier {
public:
    using Tier::Tier;

    bool idle_locked() const override { return flushes_.idle_locked(); }
    void notify() override { prefetch_cv_.notify_one(); }
    void wake_all() override
    {
        flushes_.wake_all();
        prefetch_cv_.notify_all();
    }

protected:
    // Records the chain and this tier's position in it (attach() calls it first).
    void join(Chain &chain, std::size_t position)
    {
        chain_ = &chain;
        position_ = position;
    }
    // A flush thread: hands each queued region to the next tier with flush_locked, then wakes
    // whoever waits on the chain. With `background`, it runs at a lower priority than the
    // application (see lower_this_thread_priority).
    void flush_loop(bool background);
    // Moves one region to `next` (lock held on entry and on return; released meanwhile).
    virtual void flush_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, Tier &next) = 0;

    Chain *chain_ = nullptr;
    std::size_t position_ = 0;
    WorkQueue<RegionKey> flushes_;  // guarded by the chain's lock
    std::condition_variable prefetch_cv_;
};

}  // namespace hetpu::ckpt
