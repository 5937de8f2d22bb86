// SPDX-License-Identifier: LGPL-2.1-or-later
// Giving device cache memory back under pressure: whole chunks only, never a region that has
// not reached the next tier, fewest evictions first.
#include "ckpt_backend/core/cache_shrink.h"
#include "ckpt_backend/core/device_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

using namespace hetpu::ckpt;

TEST(DeviceCache, RemovedChunksLeaveTheCacheAndStopItsGrowth)
{
    DeviceCache c(4 << 20, 1 << 20, 256 << 10);  // 4 chunks of 4 slots
    c.add_chunk();
    c.add_chunk();
    const SlotRef s = c.take();  // chunk 0
    EXPECT_EQ(c.chunk_used_slots(0), 1u);
    EXPECT_THROW(c.remove_chunk(0), std::invalid_argument) << "a chunk with a taken slot";
    c.remove_chunk(1);
    EXPECT_FALSE(c.chunk_present(1));
    EXPECT_THROW(c.remove_chunk(1), std::invalid_argument) << "twice";
    EXPECT_EQ(c.live_chunks(), 1u);
    EXPECT_EQ(c.total_slots(), 4u);
    EXPECT_EQ(c.free_slots(), 3u);
    EXPECT_EQ(c.chunks_wanted(), 0u) << "a cache that shrank does not take the memory back";
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(c.take().chunk, 0u) << "no slot of the removed chunk is handed out";
    EXPECT_THROW(c.take(), std::length_error);
    EXPECT_THROW(c.give_back({1, 0}), std::invalid_argument);
    c.give_back(s);
}

namespace {
DeviceCache cache_of(std::size_t chunks)
{
    DeviceCache c(chunks * 4 * 4096, 4 * 4096, 4096);  // 4 slots per chunk
    for (std::size_t i = 0; i < chunks; ++i)
        c.add_chunk();
    return c;
}
}  // namespace

TEST(CacheShrink, EmptyChunksFirstThenFewestEvictionsThenOldest)
{
    DeviceCache c = cache_of(4);
    // chunk 0: regions 10 (old) and 11; chunk 1: region 12 (newer, clean); chunk 2: empty;
    // chunk 3: region 13 (unflushed).
    const std::vector<ShrinkRegion> regions = {
        {10, 1, true, {0, 0}}, {11, 2, true, {0}}, {12, 5, true, {1}}, {13, 6, false, {3}}};
    ShrinkPlan p = plan_shrink(c, regions, 1);
    EXPECT_EQ(p.chunks, std::vector<std::size_t>({2}));
    EXPECT_TRUE(p.evict.empty());
    EXPECT_EQ(p.blocked, 1u);
    p = plan_shrink(c, regions, 2);
    EXPECT_EQ(p.chunks, std::vector<std::size_t>({2, 1})) << "one eviction beats two";
    EXPECT_EQ(p.evict, std::vector<std::size_t>({12}));
    p = plan_shrink(c, regions, 4);
    EXPECT_EQ(p.chunks, std::vector<std::size_t>({2, 1, 0})) << "never the chunk of an unflushed region";
    EXPECT_EQ(p.blocked, 1u);
    // Equal costs: the chunk whose data is oldest goes first.
    const std::vector<ShrinkRegion> two = {{1, 9, true, {0}}, {2, 3, true, {1}}};
    DeviceCache d = cache_of(2);
    EXPECT_EQ(plan_shrink(d, two, 1).chunks, std::vector<std::size_t>({1}));
}

TEST(CacheShrink, ARegionAcrossChunksIsEvictedOnce)
{
    DeviceCache c = cache_of(3);
    // Region 7 spans chunks 0 and 1; region 8 sits in chunk 1 too.
    const std::vector<ShrinkRegion> regions = {{7, 1, true, {0, 1}}, {8, 2, true, {1}}, {9, 3, false, {2}}};
    const ShrinkPlan p = plan_shrink(c, regions, 2);
    EXPECT_EQ(p.chunks, std::vector<std::size_t>({0, 1}));
    EXPECT_EQ(p.evict, std::vector<std::size_t>({7, 8}));
}

// Random layouts against the contract: dropped regions are clean; once they are dropped, every
// chosen chunk is empty; as many chunks are chosen as can be (a chunk is freeable exactly when
// all its regions are clean) up to `want`; `blocked` counts the rest that hold unflushed data.
TEST(CacheShrink, RandomLayoutsKeepTheContract)
{
    std::mt19937 rng(4545);
    for (int round = 0; round < 2000; ++round) {
        const std::size_t chunks = 1 + rng() % 6;
        DeviceCache c = cache_of(chunks);
        if (rng() % 3 == 0 && c.chunk_used_slots(chunks - 1) == 0)
            c.remove_chunk(chunks - 1);
        std::vector<ShrinkRegion> regions;
        std::map<std::size_t, std::set<std::size_t>> by_chunk;
        const std::size_t nregions = rng() % 8;
        for (std::size_t r = 0; r < nregions && c.free_slots() > 0; ++r) {
            ShrinkRegion reg{100 + r, rng() % 50, rng() % 4 != 0, {}};
            const std::size_t slots = 1 + rng() % 3;
            for (std::size_t k = 0; k < slots && c.free_slots() > 0; ++k) {
                const SlotRef s = c.take();
                reg.chunks.push_back(s.chunk);
                by_chunk[s.chunk].insert(r);
            }
            regions.push_back(reg);
        }
        const std::size_t want = rng() % (chunks + 1);
        const ShrinkPlan p = plan_shrink(c, regions, want);
        std::set<std::size_t> evicted(p.evict.begin(), p.evict.end());
        ASSERT_EQ(evicted.size(), p.evict.size()) << "a region evicted twice";
        for (std::size_t id : p.evict)
            ASSERT_TRUE(regions[id - 100].clean) << "an unflushed region was dropped";
        std::size_t freeable = 0, dirty = 0;
        for (std::size_t ch = 0; ch < chunks; ++ch) {
            if (!c.chunk_present(ch))
                continue;
            bool clean = true;
            for (std::size_t r : by_chunk[ch])
                clean = clean && regions[r].clean;
            (clean ? freeable : dirty)++;
        }
        ASSERT_EQ(p.chunks.size(), std::min(want, freeable));
        ASSERT_EQ(p.blocked, dirty);
        for (std::size_t ch : p.chunks) {
            ASSERT_TRUE(c.chunk_present(ch));
            for (std::size_t r : by_chunk[ch])
                ASSERT_TRUE(evicted.count(100 + r)) << "chunk " << ch << " still holds region " << 100 + r;
        }
    }
}
