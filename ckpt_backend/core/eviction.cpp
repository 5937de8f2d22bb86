// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/eviction.h"

#include <algorithm>
#include <tuple>

namespace hetpu::ckpt {

namespace {

bool has_run_of(const std::vector<LayoutBlock> &layout, const std::vector<bool> &gone, std::size_t need)
{
    std::size_t run = 0;
    for (std::size_t i = 0; i < layout.size(); ++i) {
        if (layout[i].free || gone[i]) {
            run += layout[i].size;
            if (run >= need)
                return true;
        } else {
            run = 0;
        }
    }
    return false;
}

}  // namespace

std::vector<std::size_t> order_slot_victims(std::vector<SlotCandidate> candidates, bool score,
                                            std::size_t keep_rank_below)
{
    candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                    [&](const SlotCandidate &c) { return c.prefetch_rank < keep_rank_below; }),
                     candidates.end());
    std::sort(candidates.begin(), candidates.end(), [&](const SlotCandidate &a, const SlotCandidate &b) {
        if (score && a.prefetch_rank != b.prefetch_rank)
            return a.prefetch_rank > b.prefetch_rank;  // kNoHint is the largest
        return std::tie(a.order, a.id) < std::tie(b.order, b.id);
    });
    std::vector<std::size_t> ids;
    for (const SlotCandidate &c : candidates)
        ids.push_back(c.id);
    return ids;
}

EvictionChoice choose_fifo_victims(const std::vector<LayoutBlock> &layout, std::size_t need)
{
    EvictionChoice choice;
    std::vector<bool> gone(layout.size(), false);
    if (has_run_of(layout, gone, need)) {
        choice.possible = true;
        return choice;
    }
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < layout.size(); ++i)
        if (!layout[i].free && layout[i].evictable)
            order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return layout[a].flush_order < layout[b].flush_order; });
    for (std::size_t i : order) {
        gone[i] = true;
        choice.victims.push_back(layout[i].offset);
        if (has_run_of(layout, gone, need)) {
            choice.possible = true;
            return choice;
        }
    }
    choice.victims.clear();
    return choice;
}

EvictionChoice choose_score_victims(const std::vector<LayoutBlock> &layout, std::size_t need,
                                    std::size_t keep_rank_below)
{
    EvictionChoice best;
    // Score tuple: smaller is better.
    using Score = std::tuple<std::size_t /*-soonest*/, std::size_t /*hinted bytes*/, std::uint64_t /*youngest flush*/,
                             std::size_t /*evicted bytes*/>;
    Score best_score{};
    for (std::size_t i = 0; i < layout.size(); ++i) {
        std::size_t bytes = 0, soonest = kNoHint, hinted = 0, evicted = 0;
        std::uint64_t youngest = 0;
        std::vector<std::size_t> victims;
        for (std::size_t j = i; j < layout.size(); ++j) {
            const LayoutBlock &b = layout[j];
            if (!b.free) {
                if (!b.evictable || b.prefetch_rank < keep_rank_below)
                    break;
                victims.push_back(b.offset);
                evicted += b.size;
                youngest = std::max(youngest, b.flush_order);
                if (b.prefetch_rank != kNoHint) {
                    soonest = std::min(soonest, b.prefetch_rank);
                    hinted += b.size;
                }
            }
            bytes += b.size;
            if (bytes >= need) {
                Score s{kNoHint - soonest, hinted, victims.empty() ? 0 : youngest, evicted};
                if (!best.possible || s < best_score) {
                    best.possible = true;
                    best.victims = victims;
                    best_score = s;
                }
                break;  // a longer window from i only destroys more
            }
        }
    }
    return best;
}

}  // namespace hetpu::ckpt
