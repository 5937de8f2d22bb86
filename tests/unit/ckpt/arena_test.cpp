// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/arena.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>

using hetpu::ckpt::Arena;

TEST(Arena, BestFitPicksTheSmallestHoleThatFits)
{
    Arena a(1000, 1000, 1);
    auto x = a.allocate(100), y = a.allocate(50), z = a.allocate(300), w = a.allocate(10);
    ASSERT_TRUE(x && y && z && w);
    a.release(*x);  // hole of 100 at 0
    a.release(*z);  // hole of 300 at 150
    // 540 free at the end; a 90-byte request must go into the 100 hole, not the 300 or the tail.
    auto r = a.allocate(90);
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, 0u);
    auto s = a.allocate(250);
    ASSERT_TRUE(s);
    EXPECT_EQ(*s, 150u);
}

TEST(Arena, NeighboursCoalesceSoLargeRegionsFitAgain)
{
    Arena a(1024, 1024, 64);
    auto x = a.allocate(300), y = a.allocate(300), z = a.allocate(300);
    ASSERT_TRUE(x && y && z);
    EXPECT_FALSE(a.allocate(600));
    a.release(*x);
    a.release(*z);
    EXPECT_FALSE(a.allocate(600)) << "two separate holes must not be merged";
    a.release(*y);
    EXPECT_EQ(a.largest_free_block(), 1024u);
    EXPECT_EQ(a.layout().size(), 1u);
    EXPECT_TRUE(a.allocate(1000));
}

TEST(Arena, RoundsToAlignmentAndRejectsUnknownOffsets)
{
    Arena a(4096, 4096, 64);
    auto x = a.allocate(1);
    ASSERT_TRUE(x);
    EXPECT_EQ(a.block_size(*x), 64u);
    auto y = a.allocate(65);
    EXPECT_EQ(*y % 64, 0u);
    EXPECT_EQ(a.block_size(*y), 128u);
    EXPECT_THROW(a.release(12345), std::invalid_argument);
    EXPECT_THROW(Arena(100, 100, 3), std::invalid_argument);
}

TEST(Arena, GrowUsableMakesTouchedPartAvailableIncrementally)
{
    Arena a(1 << 20, 0, 4096);
    EXPECT_FALSE(a.allocate(10)) << "nothing is touched yet";
    a.grow_usable(8192);
    auto x = a.allocate(8192);
    ASSERT_TRUE(x);
    EXPECT_FALSE(a.allocate(1));
    a.grow_usable(3 * 4096);
    auto y = a.allocate(4096);
    ASSERT_TRUE(y);
    EXPECT_EQ(*y, 8192u);
    a.release(*x);
    a.grow_usable(1 << 20);
    a.release(*y);
    EXPECT_EQ(a.largest_free_block(), std::size_t{1} << 20) << "growth coalesces with the free tail";
}

TEST(Arena, RandomOperationsKeepTheLayoutExact)
{
    std::mt19937 rng(7);
    Arena a(1 << 16, 1 << 16, 16);
    std::map<std::size_t, std::size_t> live;  // offset -> rounded size
    for (int step = 0; step < 4000; ++step) {
        if (live.empty() || rng() % 2) {
            std::size_t want = 1 + rng() % 3000;
            auto off = a.allocate(want);
            if (off) {
                ASSERT_EQ(live.count(*off), 0u);
                live[*off] = a.rounded(want);
            } else {
                // Best fit fails only when no free block is large enough.
                ASSERT_LT(a.largest_free_block(), a.rounded(want));
            }
        } else {
            auto it = live.begin();
            std::advance(it, rng() % live.size());
            a.release(it->first);
            live.erase(it);
        }
        // The layout tiles [0, usable) exactly, no two free blocks touch, used blocks match.
        std::size_t pos = 0, used = 0;
        bool prev_free = false;
        for (const auto &b : a.layout()) {
            ASSERT_EQ(b.offset, pos);
            if (b.free)
                ASSERT_FALSE(prev_free) << "adjacent free blocks were not coalesced";
            else {
                ASSERT_EQ(live.at(b.offset), b.size);
                used += b.size;
            }
            prev_free = b.free;
            pos += b.size;
        }
        ASSERT_EQ(pos, a.usable());
        ASSERT_EQ(used + a.free_bytes(), a.usable());
    }
}
