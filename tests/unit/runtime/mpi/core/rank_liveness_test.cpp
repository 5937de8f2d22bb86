// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/rank_liveness.h"

#include <gtest/gtest.h>

using namespace hetpu;

namespace {

WireAlive alive(uint64_t done, bool working, bool last = false, double longest_block_s = 0, double limit_s = 0)
{
    WireAlive a{};
    a.done = done;
    a.working = working ? 1 : 0;
    a.last = last ? 1 : 0;
    a.longest_block_s = longest_block_s;
    a.limit_s = limit_s;
    return a;
}

}  // namespace

TEST(RankLiveness, TheDefaultLimitIsTenLongestBlocksAtLeastAMinute)
{
    EXPECT_EQ(liveness_limit(0, 0), 60);
    EXPECT_EQ(liveness_limit(0, 2), 60);
    EXPECT_EQ(liveness_limit(0, 30), 300);
    EXPECT_EQ(liveness_limit(3, 30), 3) << "a configured limit is the user's";
    EXPECT_NEAR(heartbeat_period(3), 0.5, 1e-12);
}

TEST(RankLiveness, ARankThatSendsNothingIsOverdueOnceTheLimitPasses)
{
    RankLiveness l({1, 2, 3}, 3, 0.0);
    for (double t = 0.5; t <= 10; t += 0.5) {
        l.heard(1, t, alive(static_cast<uint64_t>(t * 10), true));
        l.heard(3, t, alive(static_cast<uint64_t>(t * 10), true));
        if (t <= 1)
            l.heard(2, t, alive(static_cast<uint64_t>(t * 10), true));
        const Overdue o = l.overdue(t);
        if (t <= 4) {
            EXPECT_EQ(o.rank, -1) << "rank 2 last progressed at 1 s, limit 3 s; t = " << t;
        } else {
            EXPECT_EQ(o.rank, 2) << t;
            EXPECT_FALSE(o.reporting);
            EXPECT_NEAR(o.silent_s, t - 1, 1e-12);
        }
    }
}

TEST(RankLiveness, ARankStoppedWithinTheLimitContinues)
{
    RankLiveness l({1}, 3, 0.0);
    l.heard(1, 1.0, alive(10, true));
    EXPECT_EQ(l.overdue(3.9).rank, -1) << "2.9 s without news is within 3 s";
    l.heard(1, 3.9, alive(20, true));  // back, and it progressed
    EXPECT_EQ(l.overdue(6.8).rank, -1);
    EXPECT_NEAR(l.longest_gap_s(1), 2.9, 1e-12);
    EXPECT_EQ(l.overdue(7.0).rank, 1);
}

TEST(RankLiveness, HeartbeatsWithoutProgressDoNotKeepABusyRankAlive)
{
    RankLiveness l({1}, 3, 0.0);
    l.heard(1, 0.5, alive(5, true));
    for (double t = 1; t <= 5; t += 0.5)
        l.heard(1, t, alive(5, true));  // a codelet hangs: its count stands still
    const Overdue o = l.overdue(5.0);
    EXPECT_EQ(o.rank, 1);
    EXPECT_TRUE(o.reporting);
    EXPECT_NEAR(o.silent_s, 4.5, 1e-12);
}

TEST(RankLiveness, ARankWithNothingToDoIsAliveWhileItSaysSo)
{
    RankLiveness l({1}, 3, 0.0);
    for (double t = 0.5; t <= 20; t += 0.5)
        l.heard(1, t, alive(100, false));
    EXPECT_EQ(l.overdue(20.0).rank, -1) << "idle is not stuck";
    EXPECT_EQ(l.overdue(23.5).rank, 1) << "but it must still send";
}

TEST(RankLiveness, TheSilentRankIsNamedBeforeTheOnesWaitingForIt)
{
    RankLiveness l({1, 2}, 3, 0.0);
    l.heard(1, 1.0, alive(10, true));
    l.heard(2, 0.5, alive(10, true));  // rank 2 stops first...
    for (double t = 1.5; t <= 6; t += 0.5)
        l.heard(1, t, alive(10, true));  // ...and rank 1 waits on it, reporting
    const Overdue o = l.overdue(6.0);
    EXPECT_EQ(o.rank, 2);
    EXPECT_FALSE(o.reporting);
    // Among silent ranks, the oldest progress first.
    RankLiveness m({1, 2}, 3, 0.0);
    m.heard(1, 2.0, alive(10, true));
    m.heard(2, 1.0, alive(10, true));
    EXPECT_EQ(m.overdue(9.0).rank, 2);
}

TEST(RankLiveness, ARankThatSaidItsLastHeartbeatIsNoLongerWatched)
{
    RankLiveness l({1, 2}, 3, 0.0);
    EXPECT_FALSE(l.all_finished());
    l.heard(1, 1.0, alive(10, true, true));
    EXPECT_FALSE(l.all_finished());
    l.heard(2, 1.0, alive(10, false, true));
    EXPECT_TRUE(l.all_finished());
    EXPECT_EQ(l.overdue(100.0).rank, -1);
}

TEST(RankLiveness, TheDefaultLimitFollowsTheLongestBlockAndRankZerosLimit)
{
    RankLiveness l({1}, 0, 0.0);
    EXPECT_EQ(l.limit_s(), 60);
    l.block_seen(8);
    EXPECT_EQ(l.limit_s(), 80);
    l.heard(1, 1.0, alive(1, true, false, 12));
    EXPECT_EQ(l.limit_s(), 120) << "another rank's longest block counts too";
    l.heard(1, 2.0, alive(2, true, false, 0, 500));
    EXPECT_EQ(l.limit_s(), 500) << "no rank gives up sooner than the rank it is watched by";
    EXPECT_EQ(l.overdue(400.0).rank, -1);
}

TEST(RankLiveness, HeartbeatsGoOutSixTimesPerLimit)
{
    RankLiveness l({1}, 3, 0.0);
    EXPECT_TRUE(l.heartbeat_due(0.0));
    EXPECT_FALSE(l.heartbeat_due(0.4));
    EXPECT_TRUE(l.heartbeat_due(0.5));
    EXPECT_FALSE(l.heartbeat_due(0.9));
    EXPECT_TRUE(l.heartbeat_due(1.2));
}

TEST(RankLiveness, UnknownRanksAreIgnored)
{
    RankLiveness l({0}, 3, 0.0);
    l.heard(5, 1.0, alive(10, true, true));
    EXPECT_FALSE(l.all_finished());
    EXPECT_EQ(l.overdue(3.5).rank, 0);
    EXPECT_EQ(l.longest_gap_s(5), 0);
}

TEST(RankLiveness, UnderTheDefaultLimitALongFirstBlockIsNotAHang)
{
    RankLiveness l({1}, 0, 0.0);
    for (double t = 10; t <= 200; t += 10)
        l.heard(1, t, alive(0, true));  // its first block runs for minutes, and it says so
    EXPECT_EQ(l.overdue(200.0).rank, -1);
    l.heard(1, 210, alive(50, true, false, 205));
    for (double t = 220; t <= 2000; t += 10)
        l.heard(1, t, alive(50, true));
    EXPECT_EQ(l.overdue(2000.0).rank, -1) << "10 x 205 s";
    EXPECT_EQ(l.overdue(2270.0).rank, 1);
    // A configured limit applies from the first block.
    RankLiveness c({1}, 30, 0.0);
    for (double t = 5; t <= 40; t += 5)
        c.heard(1, t, alive(0, true));
    EXPECT_EQ(c.overdue(40.0).rank, 1);
}

TEST(RankLiveness, AStoppedRankWhoseLastHeartbeatShowedNoProgressIsNamedSilent)
{
    RankLiveness l({1}, 3, 0.0);
    l.heard(1, 0.5, alive(10, true));
    l.heard(1, 2.0, alive(10, true));  // a block running, then the rank stops
    EXPECT_EQ(l.overdue(3.6).rank, -1) << "no progress for 3.1 s, but not heard for 1.6 s: not stuck, not yet silent";
    const Overdue o = l.overdue(5.1);
    EXPECT_EQ(o.rank, 1);
    EXPECT_FALSE(o.reporting);
    EXPECT_NEAR(o.silent_s, 3.1, 1e-12);
}

TEST(RankLiveness, ARankKnowsWhenItWasAwayBeyondTheLimitItself)
{
    RankLiveness l({0}, 3, 0.0);
    EXPECT_EQ(l.self_away_s(0.001), 0);
    EXPECT_EQ(l.self_away_s(2.5), 0) << "away 2.5 s of 3";
    EXPECT_NEAR(l.self_away_s(8.0), 5.5, 1e-12) << "stopped beyond the limit: the others gave up on it";
    EXPECT_EQ(l.self_away_s(8.1), 0);
}

TEST(RankLiveness, TheWatchStartsWithTheRun)
{
    RankLiveness l({1}, 3, 0.0);  // made before a start-up that took 10 s
    l.begin(10.0);
    EXPECT_EQ(l.self_away_s(10.1), 0);
    EXPECT_EQ(l.overdue(12.9).rank, -1);
    EXPECT_TRUE(l.heartbeat_due(10.1));
    EXPECT_EQ(l.overdue(13.1).rank, 1);
}
