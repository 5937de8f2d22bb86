// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/eviction.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace hetpu::ckpt;

namespace {

// Regions of `sizes` laid out back to back; flush order = index, no hints, all evictable.
std::vector<LayoutBlock> back_to_back(const std::vector<std::size_t> &sizes)
{
    std::vector<LayoutBlock> v;
    std::size_t off = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        LayoutBlock b;
        b.offset = off;
        b.size = sizes[i];
        b.evictable = true;
        b.flush_order = i;
        v.push_back(b);
        off += sizes[i];
    }
    return v;
}

bool contains(const std::vector<std::size_t> &v, std::size_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// After evicting `victims`, is there a contiguous free run of `need`?
bool run_after(const std::vector<LayoutBlock> &l, const std::vector<std::size_t> &victims, std::size_t need)
{
    std::size_t run = 0;
    for (const auto &b : l) {
        if (b.free || contains(victims, b.offset)) {
            run += b.size;
            if (run >= need)
                return true;
        } else
            run = 0;
    }
    return false;
}

}  // namespace

TEST(Eviction, FreeHoleLargeEnoughMeansNoVictims)
{
    auto l = back_to_back({100, 100, 100});
    l[1].free = true;
    for (auto choice : {choose_fifo_victims(l, 100), choose_score_victims(l, 100)}) {
        EXPECT_TRUE(choice.possible);
        EXPECT_TRUE(choice.victims.empty());
    }
}

TEST(Eviction, FifoEvictsOldestFlushedFirstAndSkipsUnflushed)
{
    auto l = back_to_back({100, 100, 100, 100});
    l[0].evictable = false;  // oldest still being flushed
    auto c = choose_fifo_victims(l, 100);
    ASSERT_TRUE(c.possible);
    ASSERT_EQ(c.victims.size(), 1u);
    EXPECT_EQ(c.victims[0], 100u);
    // 200 contiguous: FIFO evicts in age order until two neighbours are gone.
    l[2].flush_order = 9;  // region at 200 is the youngest now
    c = choose_fifo_victims(l, 200);
    ASSERT_TRUE(c.possible);
    EXPECT_TRUE(run_after(l, c.victims, 200));
    EXPECT_FALSE(contains(c.victims, 0u));
}

TEST(Eviction, NothingEvictableMeansWait)
{
    auto l = back_to_back({100, 100});
    l[0].evictable = false;
    l[1].evictable = false;
    EXPECT_FALSE(choose_fifo_victims(l, 50).possible);
    EXPECT_FALSE(choose_score_victims(l, 50).possible);
}

TEST(Eviction, ScoreKeepsTheRegionsRestoredSoonest)
{
    // Seed slide 33: prefetch ranks 1 6 5 3 4 2 (1 = next restore), need two regions' worth;
    // the window (6,5) destroys nothing needed before restore 5, every other pair does worse.
    auto l = back_to_back({100, 100, 100, 100, 100, 100});
    const std::size_t ranks[] = {1, 6, 5, 3, 4, 2};
    for (int i = 0; i < 6; ++i)
        l[i].prefetch_rank = ranks[i];
    auto c = choose_score_victims(l, 200);
    ASSERT_TRUE(c.possible);
    EXPECT_EQ(c.victims, (std::vector<std::size_t>{100, 200}));
    // A write in progress on the region ranked 5 forbids that window; next best keeps rank 3 and below.
    l[2].evictable = false;
    c = choose_score_victims(l, 200);
    ASSERT_TRUE(c.possible);
    EXPECT_EQ(c.victims, (std::vector<std::size_t>{300, 400})) << "window (3,4) beats (1,6) and (4,2)";
    // FIFO is blind to the hints: it evicts the oldest, the region restored next.
    auto f = choose_fifo_victims(l, 200);
    ASSERT_TRUE(f.possible);
    EXPECT_TRUE(contains(f.victims, 0u));
}

TEST(Eviction, ScoreWithoutHintsEvictsTheOldestWindow)
{
    auto l = back_to_back({100, 100, 100, 100});
    l[0].flush_order = 3;
    l[3].flush_order = 0;
    auto c = choose_score_victims(l, 100);
    ASSERT_TRUE(c.possible);
    EXPECT_EQ(c.victims, (std::vector<std::size_t>{300}));
}

TEST(Eviction, PrefetchNeverEvictsRegionsNeededBeforeIt)
{
    auto l = back_to_back({100, 100});
    l[0].prefetch_rank = 0;
    l[1].prefetch_rank = 1;
    EXPECT_FALSE(choose_score_victims(l, 100, /*keep_rank_below=*/2).possible);
    auto c = choose_score_victims(l, 100, 1);
    ASSERT_TRUE(c.possible);
    EXPECT_EQ(c.victims, (std::vector<std::size_t>{100}));
}

TEST(Eviction, SlotVictimsNeededLastGoFirst)
{
    // ids: 0 old, no hint; 1 newer, no hint; 2 restored next (rank 0); 3 restored after (rank 5).
    const std::vector<SlotCandidate> c{{0, 10, kNoHint}, {1, 20, kNoHint}, {2, 5, 0}, {3, 30, 5}};
    EXPECT_EQ(order_slot_victims(c, true), (std::vector<std::size_t>{0, 1, 3, 2}));
    EXPECT_EQ(order_slot_victims(c, false), (std::vector<std::size_t>{2, 0, 1, 3})) << "FIFO: capture order";
    EXPECT_EQ(order_slot_victims(c, true, 1), (std::vector<std::size_t>{0, 1, 3})) << "rank 0 is kept";
    EXPECT_EQ(order_slot_victims(c, false, 6), (std::vector<std::size_t>{0, 1}));
}

TEST(Eviction, RandomLayoutsGiveSafeSufficientChoices)
{
    std::mt19937 rng(11);
    for (int trial = 0; trial < 2000; ++trial) {
        std::vector<std::size_t> sizes(2 + rng() % 10);
        for (auto &s : sizes)
            s = 1 + rng() % 50;
        auto l = back_to_back(sizes);
        std::shuffle(sizes.begin(), sizes.end(), rng);
        for (std::size_t i = 0; i < l.size(); ++i) {
            l[i].free = rng() % 5 == 0;
            l[i].evictable = rng() % 4 != 0;
            l[i].flush_order = rng() % 100;
            l[i].prefetch_rank = rng() % 3 == 0 ? kNoHint : rng() % 20;
        }
        const std::size_t need = 1 + rng() % 120;
        const std::size_t keep = rng() % 2 ? 0 : rng() % 10;
        auto fifo = choose_fifo_victims(l, need);
        auto score = choose_score_victims(l, need, keep);
        for (std::size_t v : score.victims) {
            auto it = std::find_if(l.begin(), l.end(), [&](const LayoutBlock &b) { return b.offset == v; });
            ASSERT_NE(it, l.end());
            ASSERT_TRUE(it->evictable && !it->free);
            ASSERT_GE(it->prefetch_rank, keep);
        }
        if (score.possible) {
            ASSERT_TRUE(run_after(l, score.victims, need));
        }
        if (fifo.possible) {
            ASSERT_TRUE(run_after(l, fifo.victims, need));
            if (keep == 0) {
                ASSERT_TRUE(score.possible) << "a window exists whenever FIFO succeeds";
            }
        }
    }
}
