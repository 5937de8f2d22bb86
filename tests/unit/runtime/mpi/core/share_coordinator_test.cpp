// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/share_coordinator.h"

#include "runtime/mpi/core/coordinator_cadence.h"

#include <gtest/gtest.h>

using namespace hetpu;

namespace {

BlockRules rules_of(uint64_t total)
{
    BlockRules r{total, 1, 10};
    normalize_block_rules(r);
    return r;
}

NodeState node(int rank, double rate, uint64_t remaining)
{
    NodeState n;
    n.rank = rank;
    n.pus = 1;
    n.rate = rate;
    n.remaining = remaining;
    return n;
}

WireReport report(int rank, ReportEvent event, uint64_t done, uint64_t remaining, double rate, bool idle)
{
    WireReport r{};
    r.rank = rank;
    r.event = event;
    r.done = done;
    r.remaining = remaining;
    r.rate = rate;
    r.idle = idle ? 1 : 0;
    return r;
}

// Seconds into the job, a second after the last call: every round interval has passed.
double later()
{
    static double t = 0;
    return t += 1;
}

// Rank 0 is slow with most of the job left, rank 1 fast and idle: the rule of
// node_shares_test's first move.
ShareCoordinator slow_and_fast()
{
    ShareCoordinator c({node(0, 100, 3900), node(1, 900, 0)}, NodeNetwork{});
    c.heard(report(0, kProgress, 100, 3900, 100, false));
    c.heard(report(1, kProgress, 1000, 0, 900, true));
    return c;
}

}  // namespace

TEST(ShareCoordinator, NoRoundWithoutANewReport)
{
    ShareCoordinator c({node(0, 100, 1000), node(1, 100, 1000)}, NodeNetwork{});
    EXPECT_FALSE(c.start_round(later())) << "nothing heard yet";
    c.heard(report(0, kProgress, 10, 990, 100, false));
    EXPECT_TRUE(c.start_round(later()));
    EXPECT_FALSE(c.start_round(later())) << "the same reports twice make no second round";
}

TEST(ShareCoordinator, TheJobEndsWhenEveryRankIsIdle)
{
    ShareCoordinator c({node(0, 100, 1000), node(1, 100, 1000)}, NodeNetwork{});
    c.heard(report(0, kProgress, 1000, 0, 100, true));
    ASSERT_TRUE(c.start_round(later()));
    EXPECT_FALSE(c.stop_now()) << "rank 1 is still busy";
    c.heard(report(1, kProgress, 1000, 0, 100, true));
    ASSERT_TRUE(c.start_round(later()));
    EXPECT_TRUE(c.stop_now());
    EXPECT_EQ(c.status(), 0);
    c.heard(report(1, kProgress, 1000, 0, 100, true));
    EXPECT_FALSE(c.start_round(later())) << "a stopping job has no more rounds";
}

TEST(ShareCoordinator, AFailedRankStopsTheJobAtOnceWithItsError)
{
    ShareCoordinator c({node(0, 100, 1000), node(1, 100, 1000)}, NodeNetwork{});
    WireReport r = report(1, kProgress, 10, 990, 100, false);
    r.error = -5;
    c.heard(r);
    r.error = -22;
    c.heard(r);
    ASSERT_TRUE(c.start_round(later()));
    EXPECT_TRUE(c.stop_now()) << "rank 0 is busy, but the job failed";
    EXPECT_EQ(c.status(), -5) << "the first error stands";
}

TEST(ShareCoordinator, AMoveIsCountedAsMadeUntilBothRanksReport)
{
    ShareCoordinator c = slow_and_fast();
    ASSERT_TRUE(c.start_round(later()));
    ASSERT_FALSE(c.stop_now());
    const std::vector<MoveOrder> orders = c.plan(rules_of(10000));
    ASSERT_EQ(orders.size(), 1u);
    EXPECT_EQ(orders[0].id, 0u);
    EXPECT_EQ(orders[0].move.from, 0);
    EXPECT_EQ(orders[0].move.to, 1);
    const uint64_t count = orders[0].move.count;
    EXPECT_EQ(c.nodes()[0].remaining, 3900 - count);
    EXPECT_EQ(c.nodes()[1].remaining, count);
    EXPECT_TRUE(c.nodes()[0].moving && c.nodes()[1].moving) << "neither takes part in another move meanwhile";
    EXPECT_EQ(c.moves(), 0u) << "not handed over yet";

    // The lender gave: it is free again, the borrower still waits for the inputs.
    WireReport gave = report(0, kGave, 100, 3900 - count, 100, false);
    gave.move = 0;
    gave.moved = count;
    c.heard(gave);
    EXPECT_FALSE(c.nodes()[0].moving);
    EXPECT_TRUE(c.nodes()[1].moving);
    EXPECT_EQ(c.moves(), 1u);
    // Every rank idle, but the move is under way: the job goes on.
    c.heard(report(0, kProgress, 4000 - count, 0, 100, true));
    ASSERT_TRUE(c.start_round(later()));
    EXPECT_FALSE(c.stop_now());

    WireReport arrived = report(1, kArrived, 1000, count, 900, false);
    arrived.move = 0;
    c.heard(arrived);
    EXPECT_FALSE(c.nodes()[1].moving);
    c.heard(report(1, kProgress, 1000 + count, 0, 900, true));
    ASSERT_TRUE(c.start_round(later()));
    EXPECT_TRUE(c.stop_now()) << "every rank idle and no move under way";
}

TEST(ShareCoordinator, AMoveWithNothingToGiveFreesBothRanks)
{
    ShareCoordinator c = slow_and_fast();
    ASSERT_TRUE(c.start_round(later()));
    ASSERT_EQ(c.plan(rules_of(10000)).size(), 1u);
    WireReport gave = report(0, kGave, 4000, 0, 100, true);
    gave.move = 0;
    gave.moved = 0;  // the lender's tail had started meanwhile
    c.heard(gave);
    EXPECT_FALSE(c.nodes()[0].moving);
    EXPECT_FALSE(c.nodes()[1].moving);
    EXPECT_EQ(c.moves(), 0u);
    ASSERT_TRUE(c.start_round(later()));
    EXPECT_TRUE(c.stop_now()) << "no move is pending any more";
}

TEST(ShareCoordinator, ARankRateCountsOnceItsTrainingIsOver)
{
    ShareCoordinator c({node(0, 0, 1000), node(1, 50, 1000)}, NodeNetwork{});
    c.heard(report(0, kProgress, 10, 990, 300, false));
    EXPECT_EQ(c.nodes()[0].rate, 0) << "1% done: the first blocks run below the rank's speed";
    c.heard(report(1, kProgress, 10, 990, 300, false));
    EXPECT_EQ(c.nodes()[1].rate, 50) << "last run's rate stands meanwhile";
    c.heard(report(0, kProgress, 20, 980, 300, false));
    EXPECT_EQ(c.nodes()[0].rate, 300) << "2% done";
    c.heard(report(1, kProgress, 5, 0, 200, true));
    EXPECT_EQ(c.nodes()[1].rate, 200) << "a rank that ran dry is measured";
    EXPECT_EQ(c.nodes()[1].remaining, 0u);
}

TEST(ShareCoordinator, AReportFromNoRankIsIgnored)
{
    ShareCoordinator c({node(0, 100, 1000)}, NodeNetwork{});
    c.heard(report(3, kProgress, 1000, 0, 100, true));
    c.heard(report(-1, kProgress, 1000, 0, 100, true));
    EXPECT_FALSE(c.start_round(later()));
    EXPECT_EQ(c.nodes()[0].remaining, 1000u);
}

TEST(ShareCoordinator, RoundsKeepToTheCadenceUnlessARankRunsDry)
{
    // 1,024 ranks: reports come every half second, rounds at most every eighth of a second.
    std::vector<NodeState> nodes;
    for (int r = 0; r < 1024; ++r)
        nodes.push_back(node(r, 100, 1000));
    ShareCoordinator c(nodes, NodeNetwork{});
    EXPECT_DOUBLE_EQ(report_period(30, 1024), 1024 / kMaxReportsPerSecond);
    c.heard(report(1, kProgress, 10, 990, 100, false));
    EXPECT_TRUE(c.start_round(30.0));
    c.heard(report(2, kProgress, 10, 990, 100, false));
    EXPECT_FALSE(c.start_round(30.05)) << "within the round interval";
    EXPECT_TRUE(c.start_round(30.0 + round_interval(30, 1024))) << "the report waited for the next round";
    c.heard(report(3, kProgress, 1000, 0, 100, true));
    EXPECT_TRUE(c.start_round(30.0 + round_interval(30, 1024) + 0.001)) << "a rank ran dry: at once";
    c.heard(report(3, kProgress, 1000, 0, 100, true));
    EXPECT_FALSE(c.start_round(30.0 + round_interval(30, 1024) + 0.002)) << "still dry is no news";
}

TEST(ShareCoordinator, ALostRankLeavesTheMovesItWasPartOf)
{
    ShareCoordinator c = slow_and_fast();
    ASSERT_TRUE(c.start_round(later()));
    ASSERT_EQ(c.plan(rules_of(10000)).size(), 1u);
    c.lost(1);
    EXPECT_FALSE(c.nodes()[0].moving) << "the lender is free again";
    EXPECT_TRUE(c.nodes()[1].failed);
    ASSERT_TRUE(c.start_round(later()));
    EXPECT_TRUE(c.plan(rules_of(10000)).empty()) << "nothing moves to a lost rank";
}
