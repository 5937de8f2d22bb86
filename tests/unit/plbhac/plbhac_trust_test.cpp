// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC planner: The trust region: no block far beyond the sizes a PU has run, grown step by step.
#include "sched_policies/plbhac/core/plbhac_trust.h"
#include "tests/unit/plbhac/plbhac_planner_test_util.h"

using namespace hetpu;
using namespace hetpu::plbhac_test;

TEST(PlbhacTrust, FirstStepsStayWithinTrustTimesTheMeasuredSizesAndGrow)
{
    // Linear PUs trained on 4096-element blocks; a step of the 4M-element job would be
    // ~500k elements. The first blocks must stay within 4x what each PU has run, and the
    // blocks must grow from step to step as the measured range widens.
    const std::vector<double> spe{4e-5, 1e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.gap_threshold_s = 1e9;
    const uint64_t total = 4'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    const std::vector<uint64_t> second = train_linear(p, spe, total);
    uint64_t rem = total - 20000;
    double hi[2] = {static_cast<double>(std::max<uint64_t>(4096, second[0])),
                    static_cast<double>(std::max<uint64_t>(4096, second[1]))};
    uint64_t prev_fast = 0;
    for (int step = 0; step < 3; ++step) {
        const uint64_t b0 = p.next_block(0, rem), b1 = p.next_block(1, rem);
        ASSERT_GT(b0, 0u);
        ASSERT_GT(b1, 0u);
        EXPECT_LE(static_cast<double>(b0), 4.0 * hi[0] + 64) << "step " << step;
        EXPECT_LE(static_cast<double>(b1), 4.0 * hi[1] + 64) << "step " << step;
        EXPECT_NEAR(static_cast<double>(b1) / b0, 4.0, 0.4) << "still an equal-finish split";
        EXPECT_GT(b1, prev_fast) << "steps grow while the cap binds";
        prev_fast = b1;
        p.block_done(done(0, b0, spe[0] * b0));
        p.block_done(done(1, b1, spe[1] * b1));
        hi[0] = std::max(hi[0], static_cast<double>(b0));
        hi[1] = std::max(hi[1], static_cast<double>(b1));
        rem -= b0 + b1;
    }
}

TEST(PlbhacTrust, AGpuThatLooksSlowInTrainingDoesNotLeaveTheCpuOvercommitted)
{
    // The training measures the GPU on ~1k-element blocks, where it is slower than the CPU.
    // Without the trust region the first step hands the CPU two blocks longer than the
    // whole optimal run (seen: 2-3x the optimum); with it the run stays near the optimum.
    const sim::Scenario s = growing_advantage_node();
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const sim::StaticDistribution opt = sim::optimum_distribution(units, s.workload, s.granule);
    auto run = [&](double trust, uint64_t seed) {
        PlbhacOptions o;
        o.x_init = s.x_init;
        o.trust = trust;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        return sim::simulate(s, p, {seed, false});
    };
    const sim::SimResult without = run(0, 1);
    EXPECT_GT(without.makespan_s, 1.5 * opt.makespan_s) << "the scenario must show the failure it guards against";
    for (uint64_t seed : {1u, 2u}) {
        const sim::SimResult r = run(4.0, seed);
        std::printf("[ sim      ] growing GPU advantage, seed %u: plb-hac x%.3f of the optimum (x%.3f without the "
                    "trust region); CPU %llu elements (optimum %llu)\n",
                    static_cast<unsigned>(seed), r.makespan_s / opt.makespan_s, without.makespan_s / opt.makespan_s,
                    static_cast<unsigned long long>(r.units[0].elements),
                    static_cast<unsigned long long>(opt.blocks[0]));
        EXPECT_LE(r.makespan_s, 1.05 * opt.makespan_s) << "seed " << seed;
        EXPECT_LE(static_cast<double>(r.units[0].elements), 1.1 * static_cast<double>(opt.blocks[0]))
            << "seed " << seed;
    }
}

TEST(PlbhacTrust, AFlatModelBeyondTinyTrainingBlocksDoesNotStallTheSteps)
{
    // One-element training blocks: the GPU's fixed cost (40 ms for anything up to a few
    // thousand elements) is all it shows, so its model makes a large block look free and
    // the first solve gives it most of the step, far past its trust region. Shrinking the
    // step by that excess lands on steps of a few milliseconds, too short for the GPU's
    // fixed cost, so it never gets a block and the trust region never widens (seen: steps
    // of ~5k elements in a 55 s job, thousands of solves). Capping the GPU instead keeps
    // the steps growing, and the run ends near the optimum in a bounded number of blocks.
    const sim::Scenario s = cpu_gpu_node(
        200'000'000, 1, 1, 1, 0.0, [](double x) { return x * 1e-6; }, [](double x) { return 0.04 + x * 1e-8; });
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const sim::StaticDistribution opt = sim::optimum_distribution(units, s.workload, s.granule);
    PlbhacOptions o;
    o.x_init = s.x_init;
    PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
    // A stalled run would take minutes of solves: stop it after far more blocks than a
    // sound one needs (about 50).
    size_t completed = 0;
    p.on_trace = [&](const PlbhacTraceRecord &) {
        if (++completed > 2000)
            throw std::runtime_error("more than 2000 blocks: the steps stopped growing");
    };
    sim::SimResult r;
    ASSERT_NO_THROW(r = sim::simulate(s, p, {1, false}));
    std::printf("[ sim      ] flat GPU model after one-element training: x%.3f of the optimum, %u blocks, %zu "
                "steps solved\n",
                r.makespan_s / opt.makespan_s, r.blocks, p.solve_times_s().size());
    EXPECT_LE(p.solve_times_s().size(), 40u);
    // The trust region's ramp from one element to millions (about 13 GPU blocks of 40 ms
    // each) is a quarter of this 2 s job by itself.
    EXPECT_LE(r.makespan_s, 1.6 * opt.makespan_s);
}

TEST(PlbhacTrust, AnAcceleratorWhoseTimeStaysFlatGrowsItsBlocksFaster)
{
    // One k-means-like pass (16 ms at the optimum) on 4 CPU workers and a GPU whose blocks
    // cost a 1.3 ms launch and transfer set-up whatever their size below a million points.
    // Its blocks grew at most 3x per block from its 4k-point training blocks, 7 blocks in
    // all, 1.31-1.34x the optimum; while its time has not grown with its size, the trust
    // region allows 16x (the block after costs at most 16x a flat time), and it grows ~10x
    // at once: 6 blocks, 1.24-1.32x. (The rest of the gap is the CPUs' training.)
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.x_init = 3904;
    for (int i = 0; i < 4; ++i)
        s.units.push_back(unit("A.cpu" + std::to_string(i), "cpu", 4.5e6, 2e-5, 0, 0, 0.03));
    s.units.push_back(unit("A.gpu0", "gpu", 1.25e8, 3e-4, 1e-3, 8e-9, 0.02));
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const sim::StaticDistribution opt = sim::optimum_distribution(units, s.workload, s.granule);
    for (uint64_t seed : {1u, 2u, 3u}) {
        PlbhacOptions o;
        o.x_init = s.x_init;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        const sim::SimResult r = sim::simulate(s, p, {seed, false});
        std::vector<uint64_t> gpu;
        for (const auto &b : r.trace)
            if (b.unit == 4)
                gpu.push_back(b.count);
        uint64_t largest_growth = 0;
        for (size_t k = 1; k < gpu.size(); ++k)
            largest_growth = std::max(largest_growth, gpu[k] / std::max<uint64_t>(gpu[k - 1], 1));
        std::printf("[ sim      ] flat-time GPU beside 4 CPUs, seed %u: plb-hac x%.3f of the optimum, %zu GPU blocks, "
                    "largest growth x%llu\n",
                    static_cast<unsigned>(seed), r.makespan_s / opt.makespan_s, gpu.size(),
                    static_cast<unsigned long long>(largest_growth));
        EXPECT_GT(largest_growth, 4u) << "seed " << seed;
        EXPECT_LE(gpu.size(), 6u) << "seed " << seed;
        EXPECT_LE(r.makespan_s, 1.4 * opt.makespan_s) << "seed " << seed;
    }
}

TEST(PlbhacTrust, AWarmStartTrustsAFlatAcceleratorFromItsSavedBlocks)
{
    // A GPU whose saved blocks, 2k to 63k points, all took ~8 ms (a 6.5 ms launch and
    // transfer set-up), beside 4 CPUs: its share of a 2M-point pass is far beyond 4x its
    // largest saved block. Its time has not grown with its size there, so the trust region
    // allows 16x from the first solve of a warm start, as it would once this run measured
    // two sizes; with the saved blocks ignored the first solve held it to 4x (252k points)
    // and the CPUs took the rest.
    auto memory = std::make_shared<PlbhacMemory>();
    for (int w = 0; w < 5; ++w) {
        const bool gpu = w == 4;
        PlbhacPuMemory m;
        m.worker = w;
        for (double x : gpu ? std::vector<double>{1920, 3904, 63040} : std::vector<double>{30000, 60000, 90000})
            EXPECT_NO_THROW(m.exec.add(x, gpu ? 3e-4 + 8e-9 * x : 2.2e-7 * x));
        if (gpu)
            m.latency = {0.0065};
        m.size_lo = m.exec.points().front().first;
        m.size_hi = m.exec.points().back().first;
        memory->pus.push_back(std::move(m));
    }
    std::vector<PlannerWorker> w = workers(5);
    w[4].kind = WorkerKind::Cuda;
    const uint64_t total = 2'000'000;
    PlbhacOptions o;
    o.memory = memory;
    PlbhacPlanner p(w, rules(total), o);
    ASSERT_TRUE(p.warm_started());
    const uint64_t gpu = p.next_block(4, total);
    std::printf("[ plan     ] a warm flat GPU's first block: %llu points (4x its largest saved block: %d)\n",
                static_cast<unsigned long long>(gpu), 4 * 63040);
    EXPECT_GT(gpu, 4u * 63040u);
    EXPECT_LE(gpu, 16u * 63040u);
}

TEST(PlbhacRamp, ABlockBeyondTheMeasuredSizesHoldsTheNextUntilItIsMeasured)
{
    // While the trust region grows a PU's blocks, each new block is sized from the PU's
    // measurements; a second block sized while the first is still unmeasured would grow
    // only from the sizes before it and pay one more fixed per-block cost.
    const std::vector<double> spe{4e-5, 1e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.gap_threshold_s = 1e9;
    const uint64_t total = 4'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    const std::vector<uint64_t> second = train_linear(p, spe, total);
    const uint64_t rem = total - 20000;
    const uint64_t b1 = p.next_block(1, rem);
    ASSERT_GT(b1, 2 * std::max<uint64_t>(4096, second[1])) << "the first step extrapolates (the trust region binds)";
    EXPECT_EQ(p.next_block(1, rem - b1), 0u) << "the next block waits for the measurement of the first";
    p.block_done(done(1, b1, spe[1] * b1));
    const uint64_t b2 = p.next_block(1, rem - b1);
    EXPECT_GT(b2, b1 * 3 / 2) << "grown from the measured block";
    EXPECT_LE(static_cast<double>(b2), 4.0 * b1 + 64);
}

TEST(PlbhacTrust, TheFactorIsSquaredWhileAPuTimeHardlyGrowsWithItsSize)
{
    PlbhacPuState pu;
    EXPECT_EQ(plbhac_trust_of(pu, 4), 4) << "nothing measured";
    pu.measured = {{1e4, 0.01}, {2e4, 0.02}};  // linear
    EXPECT_EQ(plbhac_trust_of(pu, 4), 4);
    pu.measured = {{1e4, 0.01}, {4e4, 0.012}};  // flat: a fixed cost dominates
    EXPECT_EQ(plbhac_trust_of(pu, 4), 16);
    pu.measured = {{1e4, 0.05}, {2e4, 0.01}};  // the smaller block carried a one-off cost
    EXPECT_EQ(plbhac_trust_of(pu, 4), 4);
    pu.measured = {{1e4, 0.01}};
    pu.saved_blocks = {{1e4, 0.01}, {4e4, 0.012}};  // a warm start's saved blocks stand in
    EXPECT_EQ(plbhac_trust_of(pu, 4), 16);
}

TEST(PlbhacTrust, TheRatioIgnoresMinimumBlocksAndHeldPus)
{
    PlbhacPuState pu;
    pu.min_block = 64;
    pu.size_hi = 1000;
    pu.measured = {{500, 0.5}, {1000, 1.0}};
    EXPECT_DOUBLE_EQ(plbhac_trust_ratio(pu, 8000, 4), 2.0);
    EXPECT_EQ(plbhac_trust_ratio(pu, 8000, 0), 0) << "no trust region";
    EXPECT_EQ(plbhac_trust_ratio(pu, 64, 4), 0) << "its minimum block";
    pu.held = 1000;
    EXPECT_EQ(plbhac_trust_ratio(pu, 8000, 4), 0) << "held";
}
