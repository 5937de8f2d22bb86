// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/core/block_cursor.h"
#include "tests/unit/thrown_message.h"

#include <gtest/gtest.h>

using namespace hetpu;

TEST(BlockRules, DefaultsAndErrors)
{
    BlockRules r{100, 0, 0};
    EXPECT_NO_THROW(normalize_block_rules(r));
    EXPECT_EQ(r.granule, 1u);
    EXPECT_EQ(r.min_block, 1u);

    BlockRules rounded{100, 8, 10};
    EXPECT_NO_THROW(normalize_block_rules(rounded));
    EXPECT_EQ(rounded.min_block, 16u) << "min_block is rounded up to a granule multiple";

    BlockRules empty{0, 1, 1};
    EXPECT_THROW_MSG(normalize_block_rules(empty), std::invalid_argument, "total size is 0");

    BlockRules coarse{10, 16, 0};
    EXPECT_THROW_MSG(normalize_block_rules(coarse), std::invalid_argument, "the granule (16) is larger than the job");
}

TEST(BlockCursor, CoversTheRangeExactlyOnceInOrder)
{
    BlockRules r{1000, 1, 1};
    normalize_block_rules(r);
    BlockCursor c(r);
    uint64_t expected_offset = 0;
    while (!c.exhausted()) {
        Block b = c.take(37);
        ASSERT_GT(b.count, 0u);
        EXPECT_EQ(b.offset, expected_offset);
        expected_offset += b.count;
    }
    EXPECT_EQ(expected_offset, 1000u);
    EXPECT_EQ(c.take(37).count, 0u);
}

TEST(BlockCursor, RespectsGranuleAndMinimum)
{
    BlockRules r{1000, 16, 64};
    normalize_block_rules(r);
    BlockCursor c(r);
    Block b = c.take(100);  // rounded down to 96
    EXPECT_EQ(b.count, 96u);
    b = c.take(10);  // raised to the minimum
    EXPECT_EQ(b.count, 64u);
    b = c.take(0);
    EXPECT_EQ(b.count, 0u) << "asking for nothing takes nothing";
    EXPECT_EQ(c.remaining(), 1000u - 96 - 64);
}

TEST(BlockCursor, AbsorbsATailSmallerThanTheMinimum)
{
    BlockRules r{100, 1, 30};
    normalize_block_rules(r);
    BlockCursor c(r);
    EXPECT_EQ(c.take(40).count, 40u);
    // 60 left: taking 40 would leave 20 < 30, so the block grows to 60.
    Block b = c.take(40);
    EXPECT_EQ(b.offset, 40u);
    EXPECT_EQ(b.count, 60u);
    EXPECT_TRUE(c.exhausted());
}

TEST(BlockCursor, LastBlockMayBreakTheGranule)
{
    BlockRules r{100, 16, 16};
    normalize_block_rules(r);
    BlockCursor c(r);
    uint64_t total = 0;
    Block b;
    while ((b = c.take(32)).count)
        total += b.count;
    EXPECT_EQ(total, 100u);
}

TEST(FixedBlock, DefaultRequestedAndErrors)
{
    BlockRules r{1024, 16, 0};
    normalize_block_rules(r);
    EXPECT_EQ(choose_fixed_block(r, 0, 2), 128u) << "total / (4 * workers)";
    EXPECT_EQ(choose_fixed_block(r, 100, 2), 96u) << "rounded down to the granule";
    EXPECT_EQ(choose_fixed_block(r, 3, 2), 16u) << "raised to the minimum block";
    EXPECT_THROW_MSG(choose_fixed_block(r, 4096, 2), std::invalid_argument,
                     "block size 4096 is larger than the problem (1024 elements); choose a block of at most 1024");

    BlockRules tiny{3, 1, 0};
    normalize_block_rules(tiny);
    EXPECT_EQ(choose_fixed_block(tiny, 0, 8), 1u);
}

// A rank's cursor on a multi-rank run: its share, a range lent by another rank run first,
// the tail of its share handed away. Every element is handed out exactly once.
TEST(BlockCursor, RangesAddedAndTailsTakenCoverEachElementOnce)
{
    BlockRules r{1000, 10, 20};
    normalize_block_rules(r);
    BlockCursor c(r, 300, 400);  // the share [300, 700)
    EXPECT_EQ(c.remaining(), 400u);
    Block first = c.take(50);
    EXPECT_EQ(first.offset, 300u);
    EXPECT_EQ(first.count, 50u);

    Block tail = c.take_tail(95);  // rounded to a granule boundary of the job: [600, 700)
    EXPECT_EQ(tail.offset, 600u);
    EXPECT_EQ(tail.count, 100u);
    EXPECT_EQ(c.remaining(), 250u);

    c.add_front(900, 100);  // lent by another rank: runs before the rest of the share
    Block lent = c.take(1000);
    EXPECT_EQ(lent.offset, 900u) << "a lent range runs first";
    EXPECT_EQ(lent.count, 100u) << "a block never spans two ranges";

    std::vector<int> seen(1000, 0);
    for (uint64_t i = first.offset; i < first.offset + first.count; ++i)
        ++seen[i];
    for (uint64_t i = tail.offset; i < tail.offset + tail.count; ++i)
        ++seen[i];
    for (uint64_t i = lent.offset; i < lent.offset + lent.count; ++i)
        ++seen[i];
    while (!c.exhausted()) {
        Block b = c.take(30);
        ASSERT_GT(b.count, 0u);
        for (uint64_t i = b.offset; i < b.offset + b.count; ++i)
            ++seen[i];
    }
    for (uint64_t i = 300; i < 700; ++i)
        EXPECT_EQ(seen[i], 1) << "element " << i;
    for (uint64_t i = 900; i < 1000; ++i)
        EXPECT_EQ(seen[i], 1) << "element " << i;
}

TEST(BlockCursor, TailNeverLeavesLessThanTheMinimumBehind)
{
    BlockRules r{100, 1, 30};
    normalize_block_rules(r);
    BlockCursor c(r);
    Block tail = c.take_tail(80);  // 20 would be left: below min_block, so all of it goes
    EXPECT_EQ(tail.offset, 0u);
    EXPECT_EQ(tail.count, 100u);
    EXPECT_TRUE(c.exhausted());
    EXPECT_EQ(c.take_tail(10).count, 0u);

    BlockCursor d(r);
    Block small = d.take_tail(5);  // raised to min_block
    EXPECT_EQ(small.count, 30u);
    EXPECT_EQ(small.offset, 70u);
}

TEST(BlockCursor, TailOfTheJobStartsOnAGranuleBoundary)
{
    BlockRules r{1003, 10, 10};  // the job's last block may break the granule
    normalize_block_rules(r);
    BlockCursor c(r);
    Block tail = c.take_tail(20);
    EXPECT_EQ(tail.offset % 10, 0u);
    EXPECT_EQ(tail.offset + tail.count, 1003u);
    EXPECT_GE(tail.count, 20u);
}
