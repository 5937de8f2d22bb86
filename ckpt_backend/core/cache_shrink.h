// SPDX-License-Identifier: LGPL-2.1-or-later
// Giving device memory back: which whole chunks of a device cache to free under device
// memory pressure (StarPU running out of room on the device, or the MGB arbiter holding
// tasks that do not fit), and which cached regions that costs. Pure bookkeeping, no device.
//
// Only whole chunks go back to the device (a chunk is one allocation), so the plan frees
// the chunks that cost the fewest evictions. A region is dropped only when it is clean:
// its bytes are already on the next tier (the host cache or a disk) and no restore or
// flush is reading it. A chunk holding a region that is not yet flushed is never chosen,
// whatever the pressure: the flush goes first, the memory after (the caller retries once
// the device flush has moved the region on).
#pragma once

#include "ckpt_backend/core/device_cache.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hetpu::ckpt {

struct ShrinkRegion {
    std::size_t id;                   // the caller's name for the region
    std::uint64_t order;              // capture order (smaller: older)
    bool clean;                       // on the next tier and unpinned: may be dropped
    std::vector<std::size_t> chunks;  // this device's chunks holding its slots (repeats allowed)
};

struct ShrinkPlan {
    std::vector<std::size_t> chunks;  // to free, in this order; all their slots free once `evict` is dropped
    std::vector<std::size_t> evict;   // ids of the regions to drop first (all clean)
    std::size_t blocked = 0;          // chunks not chosen that hold an unflushed region (freeable after a flush)
};

// Up to `want` chunks of `cache`: first the chunks that need no eviction (highest index
// first: take() fills the lowest chunks first), then, greedily, the chunk whose regions not
// yet planned for eviction are fewest, then oldest (the newest of them is oldest), then the
// highest index. Fewer than `want` when no other chunk can be freed now.
ShrinkPlan plan_shrink(const DeviceCache &cache, const std::vector<ShrinkRegion> &regions, std::size_t want);

}  // namespace hetpu::ckpt
