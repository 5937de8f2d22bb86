// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC planner: A planner started from what an earlier job of the same name learnt.
#include "tests/unit/plbhac/plbhac_planner_test_util.h"

using namespace hetpu;
using namespace hetpu::plbhac_test;

TEST(PlbhacMemory, TheNextJobOfTheSameNameStartsTrained)
{
    // An iterative app runs one job per iteration. The first planner trains and hands its
    // models on when destroyed; the second starts in the execution phase, its first
    // blocks already split in the ratio of the PUs' speeds (4:1), with no training block.
    const std::vector<double> spe{1e-4, 2.5e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.memory = std::make_shared<PlbhacMemory>();
    const uint64_t total = 1'000'000;
    {
        PlbhacPlanner first(workers(2), rules(total), o);
        EXPECT_FALSE(first.warm_started());
        train_linear(first, spe, total);
        const uint64_t a = first.next_block(0, total - 20000);
        first.block_done(done(0, a, spe[0] * a, spe[0] * a));
    }
    ASSERT_EQ(o.memory->pus.size(), 2u);

    PlbhacPlanner second(workers(2), rules(total), o);
    EXPECT_TRUE(second.warm_started());
    EXPECT_FALSE(second.training());
    std::vector<PlbhacTraceRecord> trace;
    second.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
    const uint64_t b0 = second.next_block(0, total);
    const uint64_t b1 = second.next_block(1, total);
    EXPECT_NEAR(static_cast<double>(b1) / b0, 4.0, 0.1) << "sized by the models, not x_init";
    second.block_done(done(0, b0, spe[0] * b0, spe[0] * b0));
    EXPECT_EQ(trace.back().phase, "execution");

    // A planner for another worker set cannot use them: it trains.
    PlbhacPlanner other(workers(3), rules(total), o);
    EXPECT_FALSE(other.warm_started());
    EXPECT_EQ(other.next_block(2, total), 4096u);
}

TEST(PlbhacMemory, AWarmStartReadsTheFixedCostOffItsSavedBlocksFromTheFirstStep)
{
    // A CPU (1e-4 s per element) next to an accelerator that pays 0.5 s per block (then 1e-5
    // s per element), a ~20 s job: a step of an eighth costs the accelerator a fifth of its
    // time in fixed costs. The saved blocks show that cost, so the first step of a warm
    // start is already sized by it (overhead_steps: sqrt(step_error T / c) rounded up, 4 here,
    // the least allowed): a quarter of the job, not the eighth warm_steps gives when the
    // rule is off (step_error = 0) or only read from this run's own blocks.
    auto memory = std::make_shared<PlbhacMemory>();
    for (int w = 0; w < 2; ++w) {
        PlbhacPuMemory m;
        m.worker = w;
        for (double x : {4096.0, 25000.0, 50000.0, 100000.0, 200000.0, 400000.0})
            EXPECT_NO_THROW(m.exec.add(x, w == 0 ? 1e-4 * x : 0.5 + 1e-5 * x));
        m.size_lo = 4096;
        m.size_hi = 400000;
        memory->pus.push_back(std::move(m));
    }
    const uint64_t total = 2'000'000;
    for (double step_error : {0.1, 0.0}) {
        PlbhacOptions o;
        o.memory = std::make_shared<PlbhacMemory>(*memory);
        o.step_error = step_error;
        o.trust = 0;  // the step's size alone, not the trust region's cap on the accelerator
        PlbhacPlanner p(workers(2), rules(total), o);
        ASSERT_TRUE(p.warm_started());
        const uint64_t b0 = p.next_block(0, total), b1 = p.next_block(1, total);
        const double expected = static_cast<double>(total) / (step_error > 0 ? 4 : o.warm_steps);
        EXPECT_NEAR(static_cast<double>(b0 + b1), expected, 0.02 * expected) << "step_error " << step_error;
    }
}

TEST(PlbhacMemory, AnAcceleratorWhoseTimeDoesNotGrowWithItsBlocksShowsItsFixedCost)
{
    // A CPU (1e-4 s per element) next to an accelerator that took 0.5 s at every size from
    // 4k to 400k elements (a launch or set-up cost that dwarfs its work): its blocks'
    // least-squares line does not rise, so their time is all fixed cost. An 8M-element job
    // (~10 s): the first step of a warm start is sized by that cost (a quarter of the job,
    // the least min_steps allows) instead of the eighth of PUs without one. A 2M-element job
    // (~2.5 s), where 4 steps' fixed costs would take most of it: the floor gives way, and
    // the first step is the whole job. Blocks a little faster as they grew (noise) read the
    // same.
    for (double fall : {0.0, 0.01}) {
        auto memory = std::make_shared<PlbhacMemory>();
        for (int w = 0; w < 2; ++w) {
            PlbhacPuMemory m;
            m.worker = w;
            int i = 0;
            for (double x : {4096.0, 25000.0, 50000.0, 100000.0, 200000.0, 400000.0})
                EXPECT_NO_THROW(m.exec.add(x, w == 0 ? 1e-4 * x : 0.5 * (1.0 - fall * i++)));
            m.size_lo = 4096;
            m.size_hi = 400000;
            memory->pus.push_back(std::move(m));
        }
        for (uint64_t total : {8'000'000ull, 2'000'000ull})
            for (double step_error : {0.1, 0.0}) {
                PlbhacOptions o;
                o.memory = memory;
                o.step_error = step_error;
                o.trust = 0;
                PlbhacPlanner p(workers(2), rules(total), o);
                ASSERT_TRUE(p.warm_started());
                const uint64_t b0 = p.next_block(0, total), b1 = p.next_block(1, total - b0);
                const double steps = step_error == 0 ? o.warm_steps : total > 2'000'000 ? 4 : 1;
                const double expected = static_cast<double>(total) / steps;
                EXPECT_NEAR(static_cast<double>(b0 + b1), expected, 0.02 * expected)
                    << "total " << total << ", step_error " << step_error << ", fall " << fall;
            }
    }
}

TEST(PlbhacMemory, AWarmStartCutsTheJobIntoWarmSteps)
{
    // Models measured over a whole earlier run (sizes up to 400k): the first step of a
    // warm-started planner is a quarter of the job (warm_steps = 4), not an eighth, and
    // with steps = warm_steps the two agree (the option is what changes it).
    const std::vector<double> spe{1e-4, 2.5e-5};
    auto memory = std::make_shared<PlbhacMemory>();
    for (int w = 0; w < 2; ++w) {
        PlbhacPuMemory m;
        m.worker = w;
        for (double x : {4096.0, 50000.0, 100000.0, 200000.0, 400000.0})
            EXPECT_NO_THROW(m.exec.add(x, spe[w] * x));
        m.size_lo = 4096;
        m.size_hi = 400000;
        memory->pus.push_back(std::move(m));
    }
    const uint64_t total = 1'000'000;
    for (unsigned warm_steps : {4u, 8u}) {
        PlbhacOptions o;
        o.memory = std::make_shared<PlbhacMemory>(*memory);
        o.warm_steps = warm_steps;
        PlbhacPlanner p(workers(2), rules(total), o);
        ASSERT_TRUE(p.warm_started());
        const uint64_t b0 = p.next_block(0, total), b1 = p.next_block(1, total);
        EXPECT_NEAR(static_cast<double>(b0 + b1), static_cast<double>(total) / warm_steps, 0.02 * total / warm_steps)
            << "warm_steps " << warm_steps;
        EXPECT_NEAR(static_cast<double>(b1) / b0, 4.0, 0.2);
    }
}

TEST(PlbhacMemory, NothingIsHandedOnBeforeEveryPuMeasuredABlock)
{
    PlbhacState s;
    for (int i = 0; i < 2; ++i) {
        s.pus.push_back(std::make_unique<PlbhacPuState>());
        s.pus.back()->info.id = i;
    }
    PlbhacMemory m;
    EXPECT_FALSE(plbhac_learnt(s, m));
    s.pus[0]->exec.add(1000, 0.1);
    EXPECT_FALSE(plbhac_learnt(s, m));
    s.pus[1]->exec.add(1000, 0.2);
    ASSERT_TRUE(plbhac_learnt(s, m));
    ASSERT_EQ(m.pus.size(), 2u);
    EXPECT_EQ(m.pus[1].worker, 1);

    // A planner whose memory knows every PU starts trained, with those models.
    PlbhacState next;
    for (int i = 0; i < 2; ++i) {
        next.pus.push_back(std::make_unique<PlbhacPuState>());
        next.pus.back()->info.id = i;
    }
    next.options.memory = std::make_shared<PlbhacMemory>(m);
    plbhac_warm_start(next);
    EXPECT_TRUE(next.trained);
    EXPECT_TRUE(next.warm_started);
    EXPECT_EQ(next.pus[1]->exec.size(), 1u);
    EXPECT_EQ(next.pus[1]->saved_blocks.size(), 1u);
}
