// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC planner: What a PU pays beyond its models: per-block latency the profiling misses, and the delay
// of its results home.
#include "tests/unit/plbhac/plbhac_planner_test_util.h"

using namespace hetpu;
using namespace hetpu::plbhac_test;

TEST(PlbhacLatency, ALatencyTheProfilingDoesNotSeeIsPricedAsOneItSees)
{
    // Two PUs of the same speed; the second pays 0.25 s per block that its blocks' end times
    // show but exec + transfer do not. Priced from exec + transfer alone, it would get half
    // of every step and end every step late; priced from its end times it must do as well
    // as when the latency is reported as transfer time.
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.units = {unit("a.cpu0", "cpu", 1e5), unit("b.gpu0", "gpu", 1e5, 0, 0.25)};
    const auto run = [&](bool hide) {
        PlbhacOptions po;
        PlbhacPlanner plb(sim::planner_workers(s), sim::block_rules(s), po);
        std::vector<PlbhacTraceRecord> trace;
        plb.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
        HidesLatency hiding(plb, {0.0, hide ? 0.25 : 0.0});
        const sim::SimResult r = sim::simulate(s, hiding, {1, false});
        EXPECT_FALSE(r.forced_remainder);
        for (const auto &t : trace)
            if (t.worker == 1) {
                EXPECT_NEAR(t.measured_s, 0.25 + t.size / 1e5, 1e-6) << "its trace shows what the block took";
            }
        return r.makespan_s;
    };
    const double seen = run(false), hidden = run(true);
    std::printf("[ sim      ] latency reported: %.3f s, hidden from the profiling: %.3f s\n", seen, hidden);
    EXPECT_LE(hidden, 1.01 * seen);
    EXPECT_LT(seen, 11.5) << "20 s of work on two PUs of the same speed";
}

TEST(PlbhacLatency, TheNextJobStartsWithTheLatencyItsPredecessorMeasured)
{
    // An iterative application's passes are one job each: with one block per PU and pass,
    // a latency measured only after a block would never price one.
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.units = {unit("a.cpu0", "cpu", 1e5), unit("b.gpu0", "gpu", 1e5, 0, 0.25)};
    PlbhacOptions po;
    po.memory = std::make_shared<PlbhacMemory>();
    {
        PlbhacPlanner first(sim::planner_workers(s), sim::block_rules(s), po);
        HidesLatency hiding(first, {0.0, 0.25});
        sim::simulate(s, hiding, {1, false});
    }
    ASSERT_EQ(po.memory->pus.size(), 2u);
    EXPECT_FALSE(po.memory->pus[1].latency.empty());
    EXPECT_NEAR(plbhac_latency_s(po.memory->pus[1].latency), 0.25, 1e-6);
    EXPECT_NEAR(plbhac_latency_s(po.memory->pus[0].latency), 0.0, 1e-6);

    PlbhacPlanner second(sim::planner_workers(s), sim::block_rules(s), po);
    ASSERT_TRUE(second.warm_started());
    std::vector<PlbhacTraceRecord> trace;
    second.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
    HidesLatency hiding(second, {0.0, 0.25});
    sim::simulate(s, hiding, {1, false});
    ASSERT_FALSE(trace.empty());
    for (const auto &t : trace)
        if (t.worker == 1 && t.predicted_s > 0) {
            EXPECT_NEAR(t.predicted_s, t.measured_s, 0.02 * t.measured_s) << "its first blocks are priced with it";
        }
}

TEST(PlbhacHome, AWorkerWhoseResultsComeHomeLateEndsItsFinalShareThatMuchEarlier)
{
    // Two PUs of the same speed, 20 s of work; the second one's results reach main memory
    // 0.5 s after each of its blocks ends. The job ends when they are home, so its last
    // share must end 0.5 s before the first PU's: the job then ends 0.25 s after an even
    // split would, not 0.5 s. The next job of the same name starts knowing the delay.
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.units = {unit("a.cpu0", "cpu", 1e5), unit("b.gpu0", "gpu", 1e5)};
    const auto run = [&](const PlbhacOptions &po, bool tell) {
        PlbhacPlanner plb(sim::planner_workers(s), sim::block_rules(s), po);
        ResultsComeHomeLate late(plb, {0.0, 0.5}, tell);
        const sim::SimResult r = sim::simulate(s, late, {1, false});
        EXPECT_FALSE(r.forced_remainder);
        std::printf("[ sim      ] %s, delay %s: PUs end %.3f / %.3f s, results home %.3f / %.3f s\n",
                    plb.warm_started() ? "warm" : "cold", tell ? "told" : "not told", late.results_home_s(0),
                    late.results_home_s(1) - 0.5, late.results_home_s(0), late.results_home_s(1));
        return std::pair{late.job_end(), late.results_home_s(1) - late.results_home_s(0)};
    };
    const auto [untold_end, untold_skew] = run(PlbhacOptions(), false);
    EXPECT_NEAR(untold_skew, 0.5, 0.1) << "the control: knowing no delay, the PUs end together";
    const auto [told_end, told_skew] = run(PlbhacOptions(), true);
    EXPECT_NEAR(told_skew, 0.0, 0.1) << "the last results of both PUs come home together";
    EXPECT_LT(told_end, untold_end - 0.15);

    PlbhacOptions po;
    po.memory = std::make_shared<PlbhacMemory>();
    run(po, true);
    ASSERT_EQ(po.memory->pus.size(), 2u);
    EXPECT_NEAR(plbhac_latency_s(po.memory->pus[1].home), 0.5, 1e-9);
    EXPECT_NEAR(plbhac_latency_s(po.memory->pus[0].home), 0.0, 1e-9);
    const auto [warm_end, warm_skew] = run(po, false);
    EXPECT_NEAR(warm_skew, 0.0, 0.1) << "a warm start prices the delay its predecessor measured";
    EXPECT_LT(warm_end, untold_end - 0.15);
}

TEST(PlbhacHome, OnlyADelayWithNothingElseInFlightIsCounted)
{
    // Results that come home late because another block of the PU ran behind them say
    // nothing of what a job's last block pays: here 2 s behind a queued block, 0.1 s when
    // nothing else is in flight. Counted, the 2 s would be the median and the PU's last
    // share would end 2 s early.
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.units = {unit("a.cpu0", "cpu", 1e5), unit("b.gpu0", "gpu", 1e5)};
    PlbhacOptions po;
    po.memory = std::make_shared<PlbhacMemory>();
    PlbhacPlanner plb(sim::planner_workers(s), sim::block_rules(s), po);
    {
        ResultsComeHomeLate late(plb, {0.0, 0.1}, true, {0.0, 2.0});
        sim::simulate(s, late, {1, false});
        EXPECT_NEAR(late.results_home_s(1) - late.results_home_s(0), 0.0, 0.1);
    }
}

TEST(PlbhacLatency, PricedAtTheMedianOfTheLatestSixteenSamples)
{
    EXPECT_EQ(plbhac_latency_s({}), 0.0);
    EXPECT_EQ(plbhac_latency_s({0.003, 0.5, 0.001}), 0.003) << "a spike does not move it";
    std::vector<double> samples;
    double median = 0;
    for (int i = 0; i < 16; ++i)
        plbhac_note_recent(samples, median, 0.001);
    for (int i = 0; i < 9; ++i)
        plbhac_note_recent(samples, median, 0.01);
    EXPECT_EQ(samples.size(), 16u);
    EXPECT_EQ(median, 0.01) << "a new level, once it is most of the window";
}

TEST(PlbhacLatency, ABlockLatencyIsItsTimeUnseenByTheProfiling)
{
    PlbhacPuState pu;
    pu.last_end_s = 1.0;
    BlockDone d{0, 0, 100, 0.2, 0.05, 1.3, 0.5};  // could start at 1.0, profiled 0.25
    EXPECT_NEAR(plbhac_note_block_latency(pu, d), 0.05, 1e-12);
    EXPECT_NEAR(pu.latency_s, 0.05, 1e-12);
    d.submitted_s = -1;  // unknown: nothing noted
    EXPECT_EQ(plbhac_note_block_latency(pu, d), 0.0);
    EXPECT_EQ(pu.latencies.size(), 1u);
}

TEST(PlbhacHome, AResultsDelayCountsOnlyAfterABlockThatLeftThePuIdle)
{
    PlbhacPuState pu;
    pu.idle_after = 1000;
    plbhac_note_results_home(pu, BlockHome{0, 0, 100, 1.0, 1.5});  // another block's
    EXPECT_EQ(pu.home_delays.size(), 0u);
    plbhac_note_results_home(pu, BlockHome{0, 1000, 100, 1.0, 1.5});
    EXPECT_EQ(pu.home_delay_s, 0.5);
    pu.outstanding.push_back({100, 0, "execution", 1});  // busy again
    plbhac_note_results_home(pu, BlockHome{0, 1000, 100, 1.0, 2.0});
    EXPECT_EQ(pu.home_delays.size(), 1u);
}

TEST(PlbhacTrace, ARecordIsOneJsonLine)
{
    PlbhacTraceRecord r;
    r.time_s = 1.5;
    r.worker = 3;
    r.worker_name = "A.gpu0";
    r.size = 4096;
    r.phase = "tail";
    r.step = 7;
    const std::string j = plbhac_trace_json(r);
    EXPECT_EQ(j.find('\n'), std::string::npos);
    for (const char *field : {"\"policy\":\"plb-hac\"", "\"worker\":3", "\"worker_name\":\"A.gpu0\"", "\"size\":4096",
                              "\"phase\":\"tail\"", "\"step\":7", "\"unseen_s\""})
        EXPECT_NE(j.find(field), std::string::npos) << field << " in " << j;
}
