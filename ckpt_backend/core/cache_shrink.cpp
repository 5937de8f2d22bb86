// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/cache_shrink.h"

#include <algorithm>

namespace hetpu::ckpt {

ShrinkPlan plan_shrink(const DeviceCache &cache, const std::vector<ShrinkRegion> &regions, std::size_t want)
{
    const std::size_t n = cache.chunk_count();
    std::vector<std::vector<std::size_t>> in_chunk(n);  // region positions per chunk
    std::vector<bool> dirty(n, false);
    for (std::size_t r = 0; r < regions.size(); ++r)
        for (std::size_t c : regions[r].chunks) {
            if (c >= n || !cache.chunk_present(c))
                continue;
            if (in_chunk[c].empty() || in_chunk[c].back() != r)
                in_chunk[c].push_back(r);
            if (!regions[r].clean)
                dirty[c] = true;
        }
    ShrinkPlan plan;
    std::vector<bool> chosen(n, false), evicted(regions.size(), false);
    while (plan.chunks.size() < want) {
        // The cheapest freeable chunk given what is already planned for eviction.
        std::size_t best = n, best_cost = 0;
        std::uint64_t best_newest = 0;
        for (std::size_t c = n; c-- > 0;) {
            if (!cache.chunk_present(c) || chosen[c] || dirty[c])
                continue;
            std::size_t cost = 0;
            std::uint64_t newest = 0;
            for (std::size_t r : in_chunk[c])
                if (!evicted[r]) {
                    ++cost;
                    newest = std::max(newest, regions[r].order);
                }
            if (best == n || cost < best_cost || (cost == best_cost && newest < best_newest)) {
                best = c;
                best_cost = cost;
                best_newest = newest;
            }
        }
        if (best == n)
            break;
        chosen[best] = true;
        plan.chunks.push_back(best);
        for (std::size_t r : in_chunk[best])
            if (!evicted[r]) {
                evicted[r] = true;
                plan.evict.push_back(regions[r].id);
            }
    }
    for (std::size_t c = 0; c < n; ++c)
        if (cache.chunk_present(c) && !chosen[c] && dirty[c])
            ++plan.blocked;
    return plan;
}

}  // namespace hetpu::ckpt
