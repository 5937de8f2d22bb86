// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC planner: Virtual steps (paper section 3.3, Algorithm 1): who solves a step, how many steps a job
// pays for, the tail's shrink, and PUs held at an efficient size.
#include "sched_policies/plbhac/core/plbhac_steps.h"
#include "tests/unit/plbhac/plbhac_planner_test_util.h"

using namespace hetpu;
using namespace hetpu::plbhac_test;

TEST(PlbhacSteps, OnlyTheFirstPuToEnterAStepSolvesAndOnlyWithNewMeasurements)
{
    const std::vector<double> spe{2e-5, 1e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.trust = 0;  // the paper's step sizes: the trust region (PlbhacTrust) would cap them here
    o.gap_threshold_s = 1e9;
    const uint64_t total = 4'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    train_linear(p, spe, total);
    const uint64_t rem = total - 20000;

    // PU 1 enters step 1: the first solve.
    const uint64_t a1 = p.next_block(1, rem);
    EXPECT_EQ(p.solve_times_s().size(), 1u);
    EXPECT_EQ(p.solved_step(), 1u);
    // PU 1 at once asks for the block queued behind (its step 2): nothing was measured
    // since, so no solve, same size; the step still counts as entered.
    const uint64_t a2 = p.next_block(1, rem);
    EXPECT_EQ(a2, a1);
    EXPECT_EQ(p.solve_times_s().size(), 1u) << "nothing new measured: no re-solve";
    EXPECT_EQ(p.solved_step(), 2u);
    // PU 0 enters step 1: not the first, no solve.
    const uint64_t b1 = p.next_block(0, rem);
    EXPECT_EQ(p.solve_times_s().size(), 1u);
    // PU 1 finishes its step-1 block (a new measurement), then PU 0 enters step 2: PU 1
    // entered step 2 first, so PU 0 uses the latest solution without solving.
    p.block_done(done(1, a1, spe[1] * a1 * 1.05));
    const uint64_t b2 = p.next_block(0, rem);
    EXPECT_EQ(b2, b1);
    EXPECT_EQ(p.solve_times_s().size(), 1u) << "only the first PU to enter a step solves";
    EXPECT_EQ(p.solved_step(), 2u);
    // PU 1 enters step 3 first, with a new measurement: solve.
    const uint64_t a3 = p.next_block(1, rem);
    EXPECT_GT(a3, 0u);
    EXPECT_EQ(p.solve_times_s().size(), 2u);
    EXPECT_EQ(p.solved_step(), 3u);
    // PU 0 completes and enters step 3: no solve.
    p.block_done(done(0, b1, spe[0] * b1));
    p.next_block(0, rem);
    EXPECT_EQ(p.solve_times_s().size(), 2u);
    EXPECT_EQ(p.solved_step(), 3u);
}

TEST(PlbhacSteps, SolvedOncePerStepInSimulation)
{
    sim::Scenario s;
    s.workload = 3'000'000;
    s.granule = 64;
    s.x_init = 4096;
    s.units = {unit("a.gpu0", "gpu", 400e3, 0.002, 0.001, 1e-8, 0.02), unit("a.cpu", "cpu", 100e3, 0, 0, 0, 0.02),
               unit("b.cpu", "cpu", 50e3, 0, 0, 0, 0.02)};
    PlbhacOptions o;
    o.x_init = s.x_init;
    o.gap_threshold_s = 1e9;
    o.tail_fraction = 1.0;
    PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
    Spy spy(p);
    spy.log.reserve(10000);
    sim::simulate(s, spy, {5, false});
    unsigned highest = 0, regular = 0;
    for (const Assigned &a : spy.log) {
        if (a.phase != "execution")
            continue;
        ++regular;
        const bool first_of_step = a.step > highest;
        if (first_of_step) {
            EXPECT_EQ(a.step, highest + 1) << "steps are entered in order";
            EXPECT_EQ(a.solved_step_after, a.step) << "entering a step marks it solved";
            highest = a.step;
        } else {
            EXPECT_EQ(a.solves_after, a.solves_before)
                << "PU " << a.worker << " solved step " << a.step << " though it was not the first to enter it";
        }
    }
    EXPECT_EQ(p.solved_step(), highest);
    EXPECT_GE(highest, 6u);
    EXPECT_LE(p.solve_times_s().size(), highest);
    EXPECT_GE(regular, 2 * p.solve_times_s().size()) << "a solve per step, not per block";
}

TEST(PlbhacTail, StepSizesShrinkByOneMinusAlpha)
{
    sim::Scenario s;
    s.workload = 4'000'000;
    s.granule = 16;
    s.x_init = 4096;
    s.units = {unit("a.cpu0", "cpu", 100e3), unit("a.cpu1", "cpu", 50e3)};
    PlbhacOptions o;
    o.x_init = s.x_init;
    o.gap_threshold_s = 1e9;
    o.steps = 20;
    o.alpha = 0.1;  // tail_fraction: the default 0.7
    // Re-shares of the final step are numbered as steps of their own after it (see
    // EachShareIsResizedWithWhatWasMeasuredBeforeItIsTaken); this test reads the tail's steps
    // up to the final one, so it leaves them out.
    o.reshare_final = false;
    PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
    Spy spy(p);
    spy.log.reserve(10000);
    sim::simulate(s, spy, {1, false});

    for (int w = 0; w < 2; ++w) {
        std::map<unsigned, uint64_t> by_step;
        std::map<unsigned, std::string> phase;
        uint64_t assigned_before_tail = 0;
        for (const Assigned &a : spy.log) {
            if (a.worker == w && (a.phase == "execution" || a.phase == "tail")) {
                by_step[a.step] = a.size;
                phase[a.step] = a.phase;
            }
        }
        unsigned first_tail = 0;
        for (auto &[step, ph] : phase)
            if (ph == "tail" && !first_tail)
                first_tail = step;
        for (const Assigned &a : spy.log)
            if (a.phase != "tail")
                assigned_before_tail += a.size;
        ASSERT_GT(first_tail, 1u) << "PU " << w;
        EXPECT_GE(assigned_before_tail, 0.7 * s.workload * 0.95) << "tail only after 70% of the data";
        const unsigned last = by_step.rbegin()->first;
        int checked = 0;
        // From the last full step before the tail to the one before the last (the last
        // takes the remainder): each step is (1 - alpha) times the previous.
        for (unsigned k = first_tail; k + 1 < last; ++k) {
            ASSERT_TRUE(by_step.count(k - 1) && by_step.count(k));
            EXPECT_EQ(phase[k], "tail");
            double ratio = static_cast<double>(by_step[k]) / by_step[k - 1];
            EXPECT_NEAR(ratio, 0.9, 0.02) << "PU " << w << " step " << k;
            ++checked;
        }
        EXPECT_GE(checked, 4) << "PU " << w;
    }
}

TEST(PlbhacSteps, AModelFittedOnNearlyOneSizeIsPricedInProportion)
{
    // K-means' passes on the real node: after a few passes each PU's model window holds
    // blocks of nearly one size (389k-411k elements on the CPU worker, 89k-111k on the
    // OpenCL worker) whose times differ by timing noise alone; the CPU worker's curve fitted
    // there was a constant, 0.027 s at any size. Priced by that curve, the whole pass went
    // to the CPU worker as if free, and the OpenCL worker was left out of every later pass.
    // Here the CPU worker's window holds one time at every size (the extreme of noise
    // uncorrelated with size), and the next pass must split by the speeds the windows show
    // at their sizes, counting the OpenCL worker's latency. (This reproduces the windows,
    // not the real run's flat-curve solve, which also needed the models' exact history.)
    PlbhacOptions po;
    po.memory = std::make_shared<PlbhacMemory>();
    for (int w = 0; w < 2; ++w) {
        PlbhacPuMemory m;
        m.worker = w;
        for (double x : {7812.0, 15624.0})
            m.exec.add(x, w == 0 ? x / 15.2e6 : x / 4e6);
        for (int k = 0; k < 24; ++k) {
            const double x = (w == 0 ? 388'000.0 : 97'000.0) + ((k * 7) % 24) * 600.0;
            m.exec.add(x, w == 0 ? 0.0267 : x / 3.6e6);
        }
        if (w == 1)
            m.latency = {0.0031};
        m.size_lo = 7812;
        m.size_hi = w == 0 ? 403'000 : 112'000;
        po.memory->pus.push_back(std::move(m));
    }
    for (uint64_t total : {500'000u, 400'000u, 600'000u}) {
        PlbhacPlanner p(workers(2), rules(total, 1), po);
        ASSERT_TRUE(p.warm_started());
        const uint64_t c = p.next_block(0, total);
        const uint64_t o = p.next_block(1, total - c);
        std::printf("[ split    ] %llu elements: cpu %llu, opencl %llu\n", (unsigned long long)total,
                    (unsigned long long)c, (unsigned long long)o);
        EXPECT_EQ(c + o, total);
        // Equal finish: the CPU worker at 401.8k / 0.0267 s, the OpenCL worker at 3.6M
        // elements/s after its 3.1 ms latency.
        const double cpu_rate = (388'000 + 23 * 600.0) / 0.0267, ocl_rate = 3.6e6, latency = 0.0031;
        const double end = (static_cast<double>(total) + ocl_rate * latency) / (cpu_rate + ocl_rate);
        EXPECT_NEAR(static_cast<double>(o), ocl_rate * (end - latency), 0.01 * static_cast<double>(total)) << total;
    }
}

TEST(PlbhacSteps, APuSlowerPerElementOnLargerBlocksIsHeldAtItsEfficientSize)
{
    // A GPU whose time per element grows past 1M elements (its memory exceeded: 4x dearer
    // per element at 16M) and a linear CPU. Steps of an eighth of the job would hand the
    // GPU blocks of ~20M elements. No plan beats every unit running at its best rate
    // throughout, W / sum of max x / T(x); holding the GPU near its efficient size gets
    // close to that, where large steps take about twice as long.
    const sim::Scenario s = cpu_gpu_node(
        200'000'000, 64, 4096, 64, 0.03, [](double x) { return x * 1e-6; },
        [](double x) { return 0.002 + x * 1e-7 * std::max(1.0, std::sqrt(x / (1 << 20))); });
    double best_rate = 1e6;  // the CPU's, at every size
    double gpu_best = 0;
    for (const auto &[x, t] : s.units[1].profile)
        gpu_best = std::max(gpu_best, x / t);
    best_rate += gpu_best;
    const double bound = static_cast<double>(s.workload) / best_rate;
    for (uint64_t seed : {1u, 2u}) {
        PlbhacOptions o;
        o.x_init = s.x_init;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        const sim::SimResult r = sim::simulate(s, p, {seed, false});
        std::printf("[ sim      ] GPU dearer per element past 1M, seed %u: plb-hac x%.3f of the best-rate bound, "
                    "%u blocks\n",
                    static_cast<unsigned>(seed), r.makespan_s / bound, r.blocks);
        EXPECT_LE(r.makespan_s, 1.15 * bound) << "seed " << seed;
        EXPECT_FALSE(r.forced_remainder) << "the split shares hand out the whole job";
        // Once held, the GPU runs no block of the large, dear sizes it was measured at.
        for (const auto &b : r.trace) {
            if (b.unit == 1 && b.start_s > r.makespan_s / 2) {
                EXPECT_LE(b.count, 2'000'000u) << "seed " << seed << " at " << b.start_s << " s";
            }
        }
    }
}

TEST(PlbhacSteps, AFewMillisecondsOfJitterDoNotHoldAPu)
{
    // A lone PU, linear at 0.125 ms per element, except that its first large block ran 1.5x
    // dearer per element (a loaded machine's scheduling: the block is a few milliseconds).
    // Held at its "efficient" training size, it would run the rest of the job in blocks of
    // 16 elements, and a hold is never lifted. So blocks that short are not evidence of a
    // convex curve, even when the step length (min_step_s) does not bound them.
    const double spe = 1.25e-4;
    PlbhacOptions o;
    o.x_init = 16;
    o.min_step_s = 0;
    o.gap_threshold_s = 1e9;
    const uint64_t total = 100'000;
    PlbhacPlanner p(workers(1), rules(total, 16), o);
    uint64_t left = total;
    double now = 0;
    auto run = [&](uint64_t x, double slower) {
        now += slower * spe * static_cast<double>(x);
        p.block_done(done(0, x, slower * spe * static_cast<double>(x), now));
        left -= x;
    };
    const uint64_t t1 = p.next_block(0, left);
    run(t1, 1.0);
    const uint64_t t2 = p.next_block(0, left);
    run(t2, 1.0);
    const uint64_t b1 = p.next_block(0, left);
    ASSERT_GE(b1, 3 * t2) << "the ramp grows the first execution block";
    run(b1, 1.5);
    const uint64_t b2 = p.next_block(0, left);
    EXPECT_GT(b2, b1) << "a jitter of a few ms held the PU at " << b2 << " elements";
}

TEST(PlbhacSteps, ALonePuIsNotCutIntoSteps)
{
    // One accelerator, cheaper per element on larger blocks (an occupancy ramp up to ~64k
    // elements, then linear): with nothing to balance, cutting its work into eight steps
    // only multiplies its per-block cost. The trust region's ramp from x_init stays.
    sim::Scenario s;
    s.workload = 340'000;
    s.granule = 16;
    s.x_init = 64;
    sim::UnitSpec gpu;
    gpu.name = "A.gpu0";
    gpu.unit_class = "gpu";
    gpu.noise = 0.02;
    for (double x = 16; x <= (1 << 24); x *= 2)
        gpu.profile.push_back({x, 0.01 + 3e-6 * x * (1 + 65536 / (x + 65536))});
    s.units = {gpu};
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const sim::StaticDistribution opt = sim::optimum_distribution(units, s.workload, s.granule);
    for (uint64_t seed : {1u, 2u}) {
        PlbhacOptions o;
        o.x_init = s.x_init;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        const sim::SimResult r = sim::simulate(s, p, {seed, false});
        std::printf("[ sim      ] lone accelerator, seed %u: plb-hac x%.3f of the job in one block, %u blocks\n",
                    static_cast<unsigned>(seed), r.makespan_s / opt.makespan_s, r.blocks);
        EXPECT_LE(r.makespan_s, 1.25 * opt.makespan_s) << "seed " << seed;
        EXPECT_LE(r.blocks, 10u) << "seed " << seed;
    }
}

TEST(PlbhacSteps, AJobTooShortForItsStepsTakesFewer)
{
    // 1M elements at 5M and 10M elements/s: ~0.07 s of work after training, less than one
    // min_step_s (0.2 s): one step, each PU one block ending together. With min_step_s = 0
    // the job is cut into the configured 8 steps as before.
    const std::vector<double> spe{2e-7, 1e-7};
    const uint64_t total = 1'000'000;
    for (double min_step_s : {0.2, 0.0}) {
        PlbhacOptions o;
        o.x_init = 4096;
        o.trust = 0;
        o.min_step_s = min_step_s;
        PlbhacPlanner p(workers(2), rules(total), o);
        train_linear(p, spe, total);
        const uint64_t rem = total - 20000;
        const uint64_t b0 = p.next_block(0, rem), b1 = p.next_block(1, rem);
        if (min_step_s > 0)
            EXPECT_EQ(b0 + b1, rem) << "one step: everything left";
        else
            EXPECT_NEAR(static_cast<double>(b0 + b1), rem / 8.0, 0.05 * rem / 8.0);
        EXPECT_NEAR(static_cast<double>(b1) / b0, 2.0, 0.2);
    }
}

TEST(PlbhacSteps, AFixedCostPerBlockTakesFewerLargerSteps)
{
    // Two GPUs pay 0.25 s per block whatever its size, in a ~10 s job: with 8 steps and the
    // tail that is a fifth of the run. Their fixed cost, read off their measured blocks,
    // makes the later steps fewer and larger (plbhac_overhead_steps): fewer blocks than with
    // step_error = 0 (always the configured steps) on the same seeds, and no later end.
    sim::Scenario s;
    s.workload = 7'500'000;
    s.granule = 64;
    s.x_init = 8192;
    s.units = {unit("A.gpu0", "gpu", 400e3, 0.25, 0, 0, 0.02), unit("B.gpu0", "gpu", 300e3, 0.25, 0, 0, 0.02),
               unit("A.cpu", "cpu", 50e3, 0.001, 0, 0, 0.02)};
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const double optimum = sim::optimum_distribution(units, s.workload, s.granule).makespan_s;
    for (uint64_t seed : {1u, 2u}) {
        sim::SimResult r[2];
        for (int on : {0, 1}) {
            PlbhacOptions po;
            po.x_init = s.x_init;
            po.step_error = on ? 0.1 : 0.0;
            PlbhacPlanner plb(sim::planner_workers(s), sim::block_rules(s), po);
            r[on] = sim::simulate(s, plb, {seed, false});
            EXPECT_FALSE(r[on].forced_remainder);
        }
        std::printf("[ sim      ] seed %u: optimum %.3f s; 8 steps %.3f s (x%.3f, %u blocks), fixed-cost steps "
                    "%.3f s (x%.3f, %u blocks)\n",
                    static_cast<unsigned>(seed), optimum, r[0].makespan_s, r[0].makespan_s / optimum, r[0].blocks,
                    r[1].makespan_s, r[1].makespan_s / optimum, r[1].blocks);
        EXPECT_LE(r[1].blocks + 6, r[0].blocks) << "seed " << seed;
        EXPECT_LT(r[1].makespan_s, 1.03 * r[0].makespan_s) << "seed " << seed;
    }
}

TEST(PlbhacSteps, TheFixedCostIsTheInterceptOfTheMeasuredBlocksLessItsError)
{
    // t = 0.1 + 1e-6 x exactly: the intercept, lowered by the assumed 2% noise's error.
    std::vector<std::pair<double, double>> blocks;
    for (double x : {1e5, 2e5, 4e5, 8e5})
        blocks.emplace_back(x, 0.1 + 1e-6 * x);
    const double c = plbhac_fixed_cost_of(blocks, 4);
    EXPECT_GT(c, 0.05);
    EXPECT_LT(c, 0.1);
    // Blocks that took no longer as they grew: all fixed cost, about their mean.
    const std::vector<std::pair<double, double>> flat = {{1e5, 0.2}, {2e5, 0.2}, {4e5, 0.2}};
    EXPECT_NEAR(plbhac_fixed_cost_of(flat, 4), 0.2, 0.01);
    // Too few blocks, or sizes spanning less than 2x: unreadable.
    EXPECT_EQ(plbhac_fixed_cost_of({{1e5, 0.2}, {2e5, 0.3}}, 4), -1);
    EXPECT_EQ(plbhac_fixed_cost_of({{1e5, 0.2}, {1.2e5, 0.22}, {1.5e5, 0.25}}, 4), -1);
}

TEST(PlbhacSteps, APuIsHeldOnlyWhenLargerBlocksWereClearlyDearerPerElement)
{
    PlbhacPuState pu;
    pu.measured = {{1e5, 0.1}, {4e5, 0.4}, {8e5, 0.8}};  // linear: no efficient size
    EXPECT_EQ(plbhac_efficient_size(pu, 0.2), 0);
    pu.measured = {{1e5, 0.1}, {4e5, 0.6}, {8e5, 1.2}};  // 1.5x dearer per element past 1e5
    EXPECT_EQ(plbhac_efficient_size(pu, 0.2), 1e5);
    pu.measured = {{1e5, 0.1}, {4e5, 0.6}};  // one dearer block: not twice kConvex dearer
    EXPECT_EQ(plbhac_efficient_size(pu, 0.2), 1e5);
    pu.measured = {{1e5, 0.1}, {4e5, 0.5}};  // 1.25x: not enough for a single block
    EXPECT_EQ(plbhac_efficient_size(pu, 0.2), 0);
    pu.measured = {{1e3, 0.001}, {4e3, 0.006}, {8e3, 0.012}};  // milliseconds: no evidence
    EXPECT_EQ(plbhac_efficient_size(pu, 0.2), 0);
}
