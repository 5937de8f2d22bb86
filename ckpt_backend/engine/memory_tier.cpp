// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/engine/memory_tier.h"

#include "ckpt_backend/engine/chain.h"

#include <optional>

namespace hetpu::ckpt {

void MemoryTier::flush_loop(bool background)
{
    if (background)
        lower_this_thread_priority();
    Tier &next = chain_->tier(position_ + 1);
    std::unique_lock<std::mutex> lock(chain_->mu);
    for (;;) {
        const std::optional<RegionKey> item = flushes_.take_locked(lock, chain_->stopping);
        if (!item)
            return;
        flush_locked(lock, *item, next);
        flushes_.done_locked();
        lock.unlock();
        chain_->notify_state();
        lock.lock();
    }
}

}  // namespace hetpu::ckpt
