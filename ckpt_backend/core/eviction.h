// SPDX-License-Identifier: LGPL-2.1-or-later
// Choosing which cached regions to drop when a tier has no free block large enough.
//
// Both policies work on the tier's address layout because the arena is variable-size: freeing
// bytes only helps when the freed blocks and the free gaps around them form one contiguous
// run of at least the requested size.
//
// FIFO (the baseline of existing runtimes): evict evictable regions oldest-flushed first until
// such a run exists.
//
// Score-based look-ahead (seed slide 33): consider every window of consecutive blocks that is
// large enough and holds only evictable regions (never one being written or not yet flushed);
// evict the window that hurts least, compared in this order:
//   1. the soonest restore it destroys comes as late as possible (prefetch rank: 0 = the next
//      restore; regions with no hint are never needed again and cost nothing);
//   2. fewest hinted bytes destroyed (they would have to be read back);
//   3. the youngest region in it was flushed as early as possible (FIFO among equals, which
//      is what the policy does with no hints at all);
//   4. fewest bytes evicted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace hetpu::ckpt {

constexpr std::size_t kNoHint = std::numeric_limits<std::size_t>::max();

struct LayoutBlock {
    std::size_t offset = 0, size = 0;
    bool free = false;
    bool evictable = false;               // may_evict(state) and no reader holds it
    std::uint64_t flush_order = 0;        // order in which regions were checkpointed (smaller = older)
    std::size_t prefetch_rank = kNoHint;  // position in the pending restore order
};

struct EvictionChoice {
    bool possible = false;             // false: wait for flushes or restores to progress
    std::vector<std::size_t> victims;  // offsets of the regions to evict (may be empty)
};

// The device tier's caches are cut in slots: any evicted region frees its slots, no run is
// needed, so the choice is an order. Score: regions no hint asks for first (never needed
// again), then the one whose restore comes last (the region needed furthest ahead goes
// first, as with foreknowledge of the whole sequence), ties oldest first. FIFO: oldest first.
struct SlotCandidate {
    std::size_t id;                       // the caller's name for the region
    std::uint64_t order = 0;              // capture order (smaller = older)
    std::size_t prefetch_rank = kNoHint;  // position in the pending restore order
};
// The candidates' ids in eviction order, leaving out any whose rank is below keep_rank_below
// (a prefetch of rank r must not evict a region needed before it).
std::vector<std::size_t> order_slot_victims(std::vector<SlotCandidate> candidates, bool score,
                                            std::size_t keep_rank_below = 0);

// `layout` in address order covering the usable arena; `need` in arena-rounded bytes.
EvictionChoice choose_fifo_victims(const std::vector<LayoutBlock> &layout, std::size_t need);
// `keep_rank_below`: a window holding a region whose prefetch rank is below it is never
// chosen (a prefetch of rank r must not evict a region needed before it).
EvictionChoice choose_score_victims(const std::vector<LayoutBlock> &layout, std::size_t need,
                                    std::size_t keep_rank_below = 0);

}  // namespace hetpu::ckpt
