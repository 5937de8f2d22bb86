// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/range_moves.h"

#include <gtest/gtest.h>

using namespace hetpu;

TEST(RangeMoves, OnlyTheRankOwnShareIsLent)
{
    const Block share{1000, 500};
    EXPECT_TRUE(may_lend({1200, 300}, share, false));
    EXPECT_TRUE(may_lend({1000, 500}, share, false));
    EXPECT_FALSE(may_lend({1200, 300}, share, true)) << "the job stops";
    EXPECT_FALSE(may_lend({1400, 0}, share, false)) << "nothing left";
    EXPECT_FALSE(may_lend({200, 100}, share, false)) << "a borrowed range goes back to its owner";
    EXPECT_FALSE(may_lend({1400, 200}, share, false)) << "runs past the share";
}

TEST(RangeMoves, ABorrowedRangeGoesBackOnceAllItsResultsAreHome)
{
    BorrowedRanges b;
    EXPECT_TRUE(b.empty());
    b.add(7, 2, {1000, 300});
    b.add(9, 3, {5000, 100});
    b.credit({{1000, 100}, {1100, 100}, {5000, 50}, {40, 10}});
    EXPECT_TRUE(b.ready(false).empty());
    EXPECT_EQ(b.at(7).home, 200u);
    EXPECT_EQ(b.at(9).home, 50u);
    b.credit({{1200, 100}});
    EXPECT_EQ(b.ready(false), std::vector<uint64_t>{7});
    EXPECT_EQ(b.at(7).from, 2);
    b.erase(7);
    EXPECT_FALSE(b.empty());
}

TEST(RangeMoves, AFailedJobReturnsEveryBorrowedRange)
{
    BorrowedRanges b;
    b.add(1, 0, {0, 100});
    b.add(2, 0, {100, 100});
    b.credit({{0, 100}});
    EXPECT_EQ(b.ready(false), std::vector<uint64_t>{1});
    EXPECT_EQ(b.ready(true), (std::vector<uint64_t>{1, 2})) << "the owner's wait must end";
}

// Two tails of one lender borrowed one after the other lie side by side, and the cursor
// runs them as one range: a block across the seam counts for both (by start alone, the
// second would wait for results forever and the borrower would never finish).
TEST(RangeMoves, ABlockAcrossTwoBorrowedRangesCountsForBoth)
{
    BorrowedRanges b;
    b.add(27, 1, {890496, 1024});
    b.add(26, 1, {891520, 4736});
    b.credit({{890496, 3000}});
    EXPECT_EQ(b.at(27).home, 1024u);
    EXPECT_EQ(b.at(26).home, 1976u);
    b.credit({{893496, 2760}});
    EXPECT_EQ(b.ready(false), (std::vector<uint64_t>{26, 27}));
    EXPECT_EQ(overlap({0, 10}, {10, 5}), 0u);
    EXPECT_EQ(overlap({0, 12}, {10, 5}), 2u);
}
