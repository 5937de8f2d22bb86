// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/progress_reports.h"

#include <gtest/gtest.h>

using namespace hetpu;

namespace {

WireReport figures(uint64_t done, uint64_t remaining, bool idle = false, int error = 0)
{
    WireReport r{};
    r.done = done;
    r.remaining = remaining;
    r.idle = idle ? 1 : 0;
    r.error = error;
    return r;
}

}  // namespace

TEST(ProgressReports, ARankRateIsKnownOnceEveryWorkerRanABlock)
{
    EXPECT_EQ(node_rate({}), 0);
    EXPECT_EQ(node_rate({100, 250}), 350);
    EXPECT_EQ(node_rate({100, 0, 250}), 0) << "a partial sum would make the rank look slower";
}

TEST(ProgressReports, ForcedReportsAndMoveEventsAlwaysGoOut)
{
    ProgressReports p;
    WireReport r = figures(0, 100);
    EXPECT_TRUE(p.due(r, kProgress, true, 100, 0.0));
    EXPECT_EQ(r.event, kProgress);
    r = figures(0, 100);
    EXPECT_TRUE(p.due(r, kGave, false, 100, 0.0001)) << "unchanged, but the coordinator waits for it";
    EXPECT_EQ(r.event, kGave);
    r = figures(0, 100);
    EXPECT_TRUE(p.due(r, kArrived, false, 100, 0.0002));
}

TEST(ProgressReports, AProgressReportWaitsForAChangeAndItsPeriod)
{
    ProgressReports p;
    WireReport r = figures(0, 1000);
    ASSERT_TRUE(p.due(r, kProgress, true, 1000, 0.0));
    r = figures(0, 1000);
    EXPECT_FALSE(p.due(r, kProgress, false, 1000, 0.003)) << "nothing changed";
    r = figures(10, 900);
    EXPECT_FALSE(p.due(r, kProgress, false, 1000, 0.004)) << "changed, but within 5 ms of the last report";
    r = figures(10, 900);
    EXPECT_TRUE(p.due(r, kProgress, false, 1000, 0.006));
    EXPECT_DOUBLE_EQ(r.elapsed_s, 0.006);
    // At 10 s the period is the longest one, 50 ms (2% of the time run would be 200 ms).
    r = figures(20, 800);
    ASSERT_TRUE(p.due(r, kProgress, false, 1000, 10.0));
    r = figures(30, 700);
    EXPECT_FALSE(p.due(r, kProgress, false, 1000, 10.0 + 0.049));
    r = figures(30, 700);
    EXPECT_TRUE(p.due(r, kProgress, false, 1000, 10.0 + 0.051));
}

TEST(ProgressReports, TurningIdleOrFailingIsReportedAtOnce)
{
    ProgressReports p;
    WireReport r = figures(0, 1000);
    ASSERT_TRUE(p.due(r, kProgress, true, 1000, 1.0));
    r = figures(0, 1000, false, -5);
    EXPECT_TRUE(p.due(r, kProgress, false, 1000, 1.0001)) << "an error";
    r = figures(1000, 0, true, -5);
    EXPECT_TRUE(p.due(r, kProgress, false, 1000, 1.0002)) << "idle";
}

TEST(ProgressReports, BusyTimeEndsWhenTheRankLastRanDry)
{
    ProgressReports p;
    WireReport r = figures(0, 1000);
    ASSERT_TRUE(p.due(r, kProgress, true, 1000, 0.0));
    r = figures(1000, 0, true);
    ASSERT_TRUE(p.due(r, kProgress, false, 1000, 2.0));
    EXPECT_EQ(p.busy_s(), 2.0);
    // It borrowed a range and ran dry again.
    r = figures(1000, 500);
    ASSERT_TRUE(p.due(r, kArrived, true, 1500, 2.5));
    r = figures(1500, 0, true);
    ASSERT_TRUE(p.due(r, kProgress, false, 1500, 3.0));
    EXPECT_EQ(p.busy_s(), 3.0);
}

TEST(ProgressReports, WorkInFlightFollowsTheRankRate)
{
    ProgressReports p;
    // 1000 handed, 200 not started: 800 started, 100 done, and at 100 per second for 4 s
    // some 400 are done by now.
    WireReport r = figures(100, 200);
    r.rate = 100;
    ASSERT_TRUE(p.due(r, kProgress, true, 1000, 4.0));
    EXPECT_EQ(r.in_flight, 400u);
}
