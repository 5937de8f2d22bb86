// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC planner: The execution phase's extra blocks: gap blocks fill an early finish (paper section 3.3,
// Algorithm 1), probe blocks keep a left-out PU measured.
#include "tests/unit/plbhac/plbhac_planner_test_util.h"

using namespace hetpu;
using namespace hetpu::plbhac_test;

TEST(PlbhacProbe, ALeftOutPuGetsOneMinimumBlockPerStepWhileIdle)
{
    // PU 1 pays an 8 s latency per block (plus 1e-5 s per element): more than PU 0 needs
    // for a whole step, so the solve leaves it out. It still gets one minimum block per
    // virtual step, so that a wrong model can be corrected.
    PlbhacOptions o;
    o.x_init = 4096;
    o.gap_threshold_s = 1e9;
    const uint64_t total = 4'000'000;
    BlockRules r = rules(total);
    std::vector<PlannerWorker> w = workers(2);
    w[1].kind = WorkerKind::Cuda;  // latency-bound: its second training block is x_init / 2
    PlbhacPlanner p(w, r, o);
    std::vector<PlbhacTraceRecord> trace;
    p.on_trace = [&](const PlbhacTraceRecord &t) { trace.push_back(t); };
    p.next_block(0, total);
    p.next_block(1, total);
    p.block_done(done(0, 4096, 0.04));
    const uint64_t s0 = p.next_block(0, total);
    p.block_done(done(1, 4096, 8.0 + 1e-5 * 4096));
    const uint64_t s1 = p.next_block(1, total);
    EXPECT_EQ(s1, 2048u);
    p.block_done(done(0, s0, 1e-5 * s0));
    p.block_done(done(1, s1, 8.0 + 1e-5 * s1));
    ASSERT_FALSE(p.training());
    const uint64_t a1 = p.next_block(0, total);
    ASSERT_GT(a1, 0u);
    EXPECT_EQ(p.current_block(1), 0u) << "left out by the solve";
    const uint64_t probe = p.next_block(1, total);
    EXPECT_EQ(probe, r.min_block) << "idle and left out: a minimum block";
    EXPECT_EQ(p.next_block(1, total), 0u) << "one at a time";
    p.block_done(done(1, probe, 8.0));
    EXPECT_EQ(trace.back().phase, "probe");
    EXPECT_EQ(p.next_block(1, total), 0u) << "one per step";
    p.block_done(done(0, a1, 1e-5 * a1));
    p.next_block(0, total);  // PU 0 enters step 2
    p.next_block(0, total);  // and 3, after a measurement
    EXPECT_EQ(p.next_block(1, total), r.min_block) << "a new step: another probe";
}

TEST(PlbhacGap, EarlyFinishBeyondThresholdGetsAGapBlockThatFillsIt)
{
    const std::vector<double> spe{1e-4, 2.5e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.trust = 0;  // the paper's step sizes: the trust region (PlbhacTrust) would cap them here
    const uint64_t total = 1'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    std::vector<PlbhacTraceRecord> trace;
    p.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
    train_linear(p, spe, total);
    const uint64_t rem = total - 20000;

    // Step 1 on PU 0, 0.3 s earlier than the exact linear model predicts: below the
    // 400 ms threshold, no gap block.
    const uint64_t a1 = p.next_block(0, rem);
    ASSERT_GT(spe[0] * a1, 1.0) << "blocks of seconds";
    p.block_done(done(0, a1, spe[0] * a1 - 0.3));
    ASSERT_EQ(trace.back().phase, "execution");
    EXPECT_NEAR(trace.back().predicted_s - trace.back().measured_s, 0.3, 0.05);
    const uint64_t a2 = p.next_block(0, rem);
    p.block_done(done(0, a2, spe[0] * a2));
    EXPECT_EQ(trace.back().phase, "execution") << "a gap below the threshold is not filled";
    EXPECT_EQ(trace.back().step, 2u);

    // Step 3 finishes in half the time: the next block fills the gap.
    const uint64_t a3 = p.next_block(0, rem);
    const double a3_end = 0.5 * spe[0] * a3;  // its blocks start when handed out, at 0
    p.block_done(done(0, a3, 0.5 * spe[0] * a3, a3_end));
    ASSERT_EQ(trace.back().phase, "execution");
    const double gap = trace.back().predicted_s - trace.back().measured_s;
    ASSERT_GT(gap, 0.4);
    const uint64_t g = p.next_block(0, rem);
    ASSERT_GT(g, 0u);
    EXPECT_LT(g, a3);
    p.block_done(done(0, g, spe[0] * g, a3_end + spe[0] * g));
    EXPECT_EQ(trace.back().phase, "gap");
    EXPECT_EQ(trace.back().size, g);
    // Sized so the model predicts it fills the gap (the largest granule multiple within).
    EXPECT_LE(trace.back().predicted_s, gap + 1e-9);
    EXPECT_GE(trace.back().predicted_s, 0.95 * gap);
    // Then back to regular blocks.
    const uint64_t a4 = p.next_block(0, rem);
    p.block_done(done(0, a4, spe[0] * a4));
    EXPECT_EQ(trace.back().phase, "execution");
}

TEST(PlbhacGap, ThresholdIsAnOption)
{
    const std::vector<double> spe{1e-4, 2.5e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.gap_threshold_s = 0.1;
    const uint64_t total = 1'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    std::vector<PlbhacTraceRecord> trace;
    p.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
    train_linear(p, spe, total);
    const uint64_t a1 = p.next_block(0, total / 2);
    p.block_done(done(0, a1, spe[0] * a1 - 0.3));
    const uint64_t g = p.next_block(0, total / 2);
    p.block_done(done(0, g, spe[0] * g));
    EXPECT_EQ(trace.back().phase, "gap") << "0.3 s early is a gap with a 100 ms threshold";
}

TEST(PlbhacPu, CloseSizesArePricedInProportionThroughTheLargest)
{
    EXPECT_TRUE(plbhac_too_close(1000, 1400));
    EXPECT_FALSE(plbhac_too_close(1000, 1500));
    PlbhacPuState pu;
    pu.exec.add(1000, 0.010);
    pu.exec.add(1200, 0.011);
    pu.note_fit_range();
    pu.size_lo = 1000;
    pu.size_hi = 1200;
    ASSERT_TRUE(plbhac_narrow(pu));
    EXPECT_EQ(plbhac_anchor(pu), 1200);
    const double at_anchor = plbhac_model_time(pu, 1200);
    EXPECT_NEAR(plbhac_predict(pu, 12000), 10 * at_anchor, 1e-12);
    pu.latency_s = 0.001;
    EXPECT_NEAR(plbhac_predict(pu, 12000), 10 * at_anchor + 0.001, 1e-12) << "every block pays its latency";
    EXPECT_EQ(plbhac_predict(pu, 0), plbhac_model_time(pu, 0) * 0) << "an empty block none";
}

TEST(PlbhacPu, WaterFillingEndsWhenTheUnitsFreeSoFarHaveDoneTheWork)
{
    EXPECT_EQ(plbhac_water_filled_end({}, 100), 0);
    EXPECT_DOUBLE_EQ(plbhac_water_filled_end({{0, 10}}, 100), 10);
    // 10/s from 0, then 30/s from 2: 20 done by 2, 80 more at 40/s.
    EXPECT_DOUBLE_EQ(plbhac_water_filled_end({{2, 30}, {0, 10}}, 100), 4);
    EXPECT_DOUBLE_EQ(plbhac_water_filled_end({{0, 10}, {5, 30}}, 20), 2) << "done before the second is free";
}
