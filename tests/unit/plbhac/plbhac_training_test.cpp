// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC planner: The training phase (paper section 3.1; docs/design.md, PLB-HAC training block (erratum))
// and the first solve it leads to (section 3.2).
#include "sched_policies/plbhac/core/plbhac_training.h"
#include "tests/unit/plbhac/plbhac_planner_test_util.h"

using namespace hetpu;
using namespace hetpu::plbhac_test;

TEST(PlbhacTraining, FirstBlocksAreXinitThenTwoXinitTimesRatio)
{
    // Four PUs; times of the first block 1.0, 2.0, 2.5 and 10 s (PU 1 is the fastest).
    PlbhacOptions o;
    o.x_init = 4096;
    PlbhacPlanner p(workers(4), rules(10'000'000), o);
    EXPECT_EQ(p.x_init(), 4096u);
    for (int w = 0; w < 4; ++w)
        EXPECT_EQ(p.next_block(w, 10'000'000), 4096u) << "every PU first gets x_init";
    for (int w = 0; w < 4; ++w)
        EXPECT_EQ(p.next_block(w, 10'000'000), 0u) << "one training block at a time";
    EXPECT_TRUE(p.training());

    p.block_done(done(1, 4096, 1.0));
    EXPECT_EQ(p.next_block(1, 10'000'000), 8192u) << "first to finish: 2 x_init";
    p.block_done(done(0, 4096, 2.0));
    EXPECT_EQ(p.next_block(0, 10'000'000), 4096u) << "R = 1/2: 2 x_init R";
    p.block_done(done(2, 4096, 2.5));
    // R = 0.4: 2 * 4096 * 0.4 = 3276.8, rounded down to the granule (64): 3264.
    EXPECT_EQ(p.next_block(2, 10'000'000), 3264u);
    p.block_done(done(3, 4096, 10.0));
    // R = 0.1: 819.2 elements, rounded down to the granule.
    EXPECT_EQ(p.next_block(3, 10'000'000), 768u);
    EXPECT_TRUE(p.training());
}

TEST(PlbhacTraining, AnAcceleratorsSecondBlockIsNotLatencyOnly)
{
    PlbhacOptions o;
    o.x_init = 4096;
    std::vector<PlannerWorker> w = workers(2);
    w[1].kind = WorkerKind::OpenCL;
    PlbhacPlanner p(w, rules(10'000'000), o);
    ASSERT_EQ(p.next_block(0, 10'000'000), 4096u);
    ASSERT_EQ(p.next_block(1, 10'000'000), 4096u);
    p.block_done(done(0, 4096, 1.0));
    p.block_done(done(1, 4096, 10.0));
    // R = 0.1 would give 768 elements; an accelerator gets at least x_init / 2.
    EXPECT_EQ(p.next_block(1, 10'000'000), 2048u);
}

// Two training sizes within 1.5x of each other show no slope, and the PU's model stays
// proportional through them: an accelerator whose paper size 2 x_init R would fall there
// gets 2 x_init, a CPU keeps the paper's size, and an accelerator already 1.5x away keeps it.
TEST(PlbhacTraining, AnAcceleratorsSecondBlockShowsASlope)
{
    PlbhacOptions o;
    o.x_init = 4096;
    std::vector<PlannerWorker> w = workers(4);
    w[1].kind = WorkerKind::OpenCL;
    w[2].kind = WorkerKind::Cuda;
    PlbhacPlanner p(w, rules(10'000'000), o);
    for (int i = 0; i < 4; ++i)
        ASSERT_EQ(p.next_block(i, 10'000'000), 4096u);
    p.block_done(done(0, 4096, 1.0));
    ASSERT_EQ(p.next_block(0, 10'000'000), 8192u);  // the first to finish: 2 x_init
    p.block_done(done(1, 4096, 1.6));
    // R = 0.625: the paper's 5120 elements are within 1.5x of 4096.
    EXPECT_EQ(p.next_block(1, 10'000'000), 8192u);
    p.block_done(done(2, 4096, 3.2));
    // R = 0.3125: 2560 elements, 1.6x below x_init, already show a slope.
    EXPECT_EQ(p.next_block(2, 10'000'000), 2560u);
    p.block_done(done(3, 4096, 1.6));
    EXPECT_EQ(p.next_block(3, 10'000'000), 5120u) << "a CPU follows the paper";
}

TEST(PlbhacTraining, TheOneSynchronisationAndNoIdlenessMeanwhile)
{
    PlbhacOptions o;
    o.x_init = 4096;
    o.trust = 0;  // the paper's step sizes: the trust region (PlbhacTrust) would cap them here
    PlbhacPlanner p(workers(2), rules(10'000'000), o);
    std::vector<PlbhacTraceRecord> trace;
    p.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
    const uint64_t rem = 10'000'000;
    ASSERT_EQ(p.next_block(0, rem), 4096u);
    ASSERT_EQ(p.next_block(1, rem), 4096u);
    p.block_done(done(0, 4096, 0.1));
    ASSERT_EQ(p.next_block(0, rem), 8192u);
    p.block_done(done(1, 4096, 0.4));
    ASSERT_EQ(p.next_block(1, rem), 2048u);  // R = 0.25 -> 2048 (= the x_init / 2 floor)
    p.block_done(done(0, 8192, 0.2));
    // PU 0 finished its training, PU 1 has not: no execution block yet, but PU 0 keeps
    // working, on blocks twice as large each time (up to a quarter of an even share).
    EXPECT_TRUE(p.training());
    uint64_t waiting = 8192;
    for (int i = 0; i < 3; ++i) {
        waiting *= 2;
        EXPECT_EQ(p.next_block(0, rem), waiting);
        p.block_done(done(0, waiting, 0.2 * waiting / 8192));
        EXPECT_TRUE(p.training());
        EXPECT_EQ(p.solved_step(), 0u);
        EXPECT_TRUE(p.solve_times_s().empty()) << "no model solve before the synchronisation";
    }
    EXPECT_EQ(p.next_block(0, rem), 2 * waiting);  // still in flight when training ends
    p.block_done(done(1, 2048, 0.2));
    EXPECT_FALSE(p.training()) << "every PU finished both training blocks";
    for (const auto &r : trace) {
        EXPECT_EQ(r.phase, "training");
        EXPECT_EQ(r.step, 0u);
    }
    const uint64_t b1 = p.next_block(1, rem);
    EXPECT_GT(b1, 0u);
    EXPECT_EQ(p.solved_step(), 1u);
    EXPECT_EQ(p.solve_times_s().size(), 1u);
    p.block_done(done(0, 2 * waiting, 0.4 * waiting / 8192));  // the block PU 0 had in flight is still "training"
    EXPECT_EQ(trace.back().phase, "training");
    p.block_done(done(1, b1, 1e-4 * b1));
    EXPECT_EQ(trace.back().phase, "execution");
    EXPECT_EQ(trace.back().step, 1u);
}

TEST(PlbhacTraining, NoExecutionBlockBeforeEveryPuTrainedInSimulation)
{
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.x_init = 4096;
    s.units = {unit("a.gpu0", "gpu", 400e3, 0.002, 0.001, 1e-8, 0.02), unit("a.cpu", "cpu", 40e3, 0, 0, 0, 0.02),
               unit("b.cpu", "cpu", 10e3, 0, 0, 0, 0.02)};
    PlbhacOptions o;
    o.x_init = s.x_init;
    PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
    Spy spy(p);
    spy.log.reserve(10000);
    sim::simulate(s, spy, {3, false});
    std::map<int, int> training_done;
    double training_end = 0;
    for (size_t i : spy.completed) {
        const Assigned &a = spy.log[i];
        if (a.phase == "training") {
            ++training_done[a.worker];
            continue;
        }
        for (int w = 0; w < 3; ++w)
            ASSERT_GE(training_done[w], 2) << "an execution block completed before PU " << w << " finished training";
        if (training_end == 0)
            training_end = a.start_s;
    }
    // A block handed out while training was still on is a training block, and the
    // fastest PU did more than its two training blocks while waiting (no idleness).
    for (const Assigned &a : spy.log) {
        if (a.training_before) {
            EXPECT_EQ(a.phase, "training");
        }
    }
    EXPECT_GT(training_done[0], 2);
    EXPECT_EQ(training_done[2], 2);
}

TEST(PlbhacSolve, FirstSolveEqualisesPredictedFinishTimes)
{
    // PU 0 four times slower than PU 1, linear times.
    const std::vector<double> spe{4e-5, 1e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.trust = 0;  // the paper's step sizes: the trust region (PlbhacTrust) would cap them here
    o.steps = 8;
    const uint64_t total = 4'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    std::vector<PlbhacTraceRecord> trace;
    p.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
    train_linear(p, spe, total);
    ASSERT_FALSE(p.training());
    const uint64_t rem = total - 20000;
    const uint64_t b0 = p.next_block(0, rem), b1 = p.next_block(1, rem);
    EXPECT_EQ(p.solve_times_s().size(), 1u);
    EXPECT_EQ(p.solve_failures(), 0u);
    ASSERT_GT(b0, 0u);
    EXPECT_NEAR(static_cast<double>(b1) / b0, 4.0, 0.4) << b0 << " vs " << b1;
    EXPECT_EQ(b0, p.current_block(0));
    EXPECT_EQ(b1, p.current_block(1));
    EXPECT_EQ(b0 % 64 + b1 % 64, 0u) << "granule multiples";
    // The step's workload is split: sum about the post-training data / steps (8).
    EXPECT_NEAR(static_cast<double>(b0 + b1), static_cast<double>(rem) / 8, 0.05 * rem / 8);
    // Predicted finish times equal.
    p.block_done(done(0, b0, spe[0] * b0));
    p.block_done(done(1, b1, spe[1] * b1));
    ASSERT_EQ(trace.size(), 6u);
    EXPECT_NEAR(trace[4].predicted_s, trace[5].predicted_s, 0.02 * trace[5].predicted_s);
    EXPECT_NEAR(trace[4].predicted_s, spe[0] * b0, 0.02 * spe[0] * b0) << "the linear model is exact";
}

TEST(PlbhacSolve, CloseTrainingSizesDoNotGiveANoiseSlope)
{
    // PU 1 is about half as fast as PU 0, so its two training blocks have nearly the same
    // size (4096 and 4160), and it is the last to finish training, so it took no waiting
    // blocks of other sizes. With timing noise, a line through two points 64 elements
    // apart has a slope made of noise (here a tenth of the true one) and would hand PU 1
    // most of the step. Taken as proportional instead, PU 1 gets about a third.
    PlbhacOptions o;
    o.x_init = 4096;
    const uint64_t total = 4'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    for (int w = 0; w < 2; ++w)
        ASSERT_EQ(p.next_block(w, total), 4096u);
    p.block_done(done(0, 4096, 0.1016));
    ASSERT_EQ(p.next_block(0, total), 8192u);
    p.block_done(done(1, 4096, 0.2));
    ASSERT_EQ(p.next_block(1, total), 4160u);  // R = 0.508
    p.block_done(done(0, 8192, 0.2032));
    ASSERT_EQ(p.next_block(0, total), 16384u);  // waiting for PU 1
    p.block_done(done(1, 4160, 0.2005));        // true time 0.2031: 1.3% noise
    ASSERT_FALSE(p.training());
    p.block_done(done(0, 16384, 0.4064));  // PU 0's next block waits for this one (PlbhacRamp)
    const uint64_t b0 = p.next_block(0, total), b1 = p.next_block(1, total);
    const double share1 = static_cast<double>(b1) / (b0 + b1);
    EXPECT_GT(share1, 0.25) << b0 << " / " << b1;
    EXPECT_LT(share1, 0.42) << b0 << " / " << b1;
}

TEST(PlbhacTraining, OneFastAcceleratorBesideManySlowCpusIsNotHeldToEvenShares)
{
    // matmul of order 4096 on one GPU and 15 CPU workers, in columns of 32 (rates measured
    // on a node of one H200): a CPU takes 88 ms for its smallest block, the GPU ~75 ms for
    // the whole job, so the best distribution leaves every CPU out. While the CPUs run
    // their first training block, the waiting GPU once took blocks of at most a quarter of
    // an even share (64 columns, 1.5 ms, mostly launch cost): it had done about half of the
    // job when they finished, and each CPU then took a second training block or a probe,
    // 2.4x the optimum. Sized by the least share the measurements allow it, the GPU ends
    // the job during the CPUs' first block. That job ends during its training, and still
    // hands on what every PU measured: the next run starts from it, gives the CPUs nothing
    // and no probe either (a CPU's smallest block outlasts the job), and ends near the
    // optimum.
    sim::Scenario s = fifteen_cpus_and_a_gpu(
        4096, 32, 0.03, 2e-6, 32, 4096, [](double x) { return 1e-4 + 2.75e-3 * x; },
        [](double x) { return 5e-4 + 1.6e-5 * x; });
    s.x_init = 32;
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const sim::StaticDistribution opt = sim::optimum_distribution(units, s.workload, s.granule);
    const auto cpu_blocks = [](const sim::SimResult &r) {
        unsigned n = 0;
        for (const auto &b : r.trace)
            n += b.unit != 15;
        return n;
    };
    for (uint64_t seed : {1u, 2u, 3u}) {
        auto memory = std::make_shared<PlbhacMemory>();
        sim::SimResult cold, warm;
        bool warm_started = false;
        {
            PlbhacOptions o;
            o.x_init = s.x_init;
            o.memory = memory;
            PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
            cold = sim::simulate(s, p, {seed, false});
            EXPECT_TRUE(p.training()) << "seed " << seed << ": the job ended after the training";
        }
        {
            PlbhacOptions o;
            o.x_init = s.x_init;
            o.memory = memory;
            PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
            warm_started = p.warm_started();
            warm = sim::simulate(s, p, {seed + 10, false});
        }
        std::printf("[ sim      ] 15 CPUs + 1 GPU, matmul 4096, seed %u: plb-hac x%.3f of the optimum cold (%u CPU "
                    "blocks), x%.3f warm (%u)\n",
                    static_cast<unsigned>(seed), cold.makespan_s / opt.makespan_s, cpu_blocks(cold),
                    warm.makespan_s / opt.makespan_s, cpu_blocks(warm));
        // One training block per CPU is the cost of starting cold (88 ms of a 75 ms job).
        EXPECT_EQ(cpu_blocks(cold), 15u) << "seed " << seed;
        EXPECT_LE(cold.makespan_s, 1.35 * opt.makespan_s) << "seed " << seed;
        EXPECT_TRUE(warm_started) << "seed " << seed;
        EXPECT_EQ(cpu_blocks(warm), 0u) << "seed " << seed;
        EXPECT_LE(warm.makespan_s, 1.06 * opt.makespan_s) << "seed " << seed;
    }
}

TEST(PlbhacTraining, ASlowPuWaitingForTheSynchronisationDoesNotOutlastAShortJob)
{
    // A job of about a second at the optimum on a fast GPU and CPU, a PU 20x slower (its
    // training blocks take a third of the job) and one whose first training block alone
    // outlasts the job, so the job ends before the training synchronisation. The slow PU's
    // waiting blocks double while it waits; capped only by a share of the job (a quarter of
    // an even share of the job: 125k elements, 2.5 s at its speed; or of what is left),
    // its last one ran 0.3-0.5 s past everybody else's end: 1.27-1.45x the bound below.
    // Capped by the end the measured PUs alone would reach, it ends with them.
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 256;
    s.x_init = 16384;
    s.units = {unit("a.gpu", "gpu", 1e6, 1e-3, 0, 0, 0.02), unit("b.cpu", "cpu", 1e6, 0, 0, 0, 0.02),
               unit("c.phi", "phi", 5e4, 0, 0, 0, 0.02), unit("d.gpu", "gpu", 1.6e4, 0, 0, 0, 0.02)};
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const sim::StaticDistribution opt = sim::optimum_distribution(units, s.workload, s.granule);
    // No cold start avoids the slowest PU's first training block (x_init at 16k per second).
    const double bound = std::max(opt.makespan_s, units[3].nominal_cost(s.x_init).total());
    for (uint64_t seed : {1u, 2u, 3u}) {
        PlbhacOptions o;
        o.x_init = s.x_init;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        const sim::SimResult r = sim::simulate(s, p, {seed, false});
        double phi_end = 0;
        for (const auto &b : r.trace)
            if (b.unit == 2)
                phi_end = std::max(phi_end, b.end_s);
        std::printf("[ sim      ] a slow PU waiting in a short job, seed %u: plb-hac x%.3f of the bound, the slow "
                    "PU's last block ends at %.3f s of %.3f\n",
                    static_cast<unsigned>(seed), r.makespan_s / bound, phi_end, r.makespan_s);
        // The job ends before the slow PU could finish its training: it either waits for the
        // synchronisation to the end or declines its second block (plbhac_cannot_help).
        EXPECT_LE(r.makespan_s, 1.12 * bound) << "seed " << seed;
        EXPECT_FALSE(r.forced_remainder) << "seed " << seed;
    }
}

TEST(PlbhacTraining, XinitIsTheOptionOrAThirtySecondOfTheJobPerPuRoundedToTheGranule)
{
    PlbhacOptions o;
    EXPECT_EQ(plbhac_x_init(rules(1 << 20, 64), o, 4), uint64_t{8192}) << "2^20 / (32 x 4)";
    EXPECT_EQ(plbhac_x_init(rules(1 << 20, 1000), o, 4), uint64_t{8000}) << "rounded down to the granule";
    o.x_init = 1000;
    EXPECT_EQ(plbhac_x_init(rules(1 << 20, 64), o, 4), uint64_t{960});
    o.x_init = 0;
    BlockRules r = rules(1000, 1);
    r.min_block = 100;
    EXPECT_EQ(plbhac_x_init(r, o, 4), uint64_t{100}) << "never under the job's minimum block";
}

TEST(PlbhacTraining, AUnitThatCannotHelpIsNotTrainedFurther)
{
    // matmul n = 4096 on one H200 beside 15 CPU workers, 8192 columns, a job of ~0.15 s: a
    // CPU's smallest block (32 columns) takes 88 ms, the GPU does everything in ~0.15 s
    // alone. Every CPU's first training block is the cost of finding that out; a second one
    // (another 88 ms) would end after the GPU has finished everything. Without the rule the
    // CPUs trained on and the job ended at their second blocks' end (0.176 s); with it, the
    // job ends with the GPU's work.
    const sim::Scenario s = fifteen_cpus_and_a_gpu(
        8192, 32, 0.0, 2e-6, 32, 8192, [](double x) { return 2.75e-3 * x + 1e-4; },
        [](double x) { return 1.6e-5 * x + 5e-4; });
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const double first_cpu_block = units[0].nominal_cost(32).total();
    const sim::StaticDistribution gpu_alone = sim::optimum_distribution({units[15]}, s.workload, s.granule);
    PlbhacOptions o;
    o.x_init = 32;
    PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
    const sim::SimResult r = sim::simulate(s, p, {1, false});
    std::vector<int> cpu_blocks(15, 0);
    for (const auto &b : r.trace)
        if (b.unit < 15)
            ++cpu_blocks[static_cast<size_t>(b.unit)];
    for (int i = 0; i < 15; ++i)
        EXPECT_EQ(cpu_blocks[static_cast<size_t>(i)], 1) << "CPU " << i << " was trained on";
    const double bound = std::max(first_cpu_block, gpu_alone.makespan_s);
    std::printf("[ sim      ] 15 CPUs beside a GPU on a 0.15 s job: %.4f s, GPU alone %.4f s, a CPU block %.4f s\n",
                r.makespan_s, gpu_alone.makespan_s, first_cpu_block);
    EXPECT_LE(r.makespan_s, 1.05 * bound);
    EXPECT_FALSE(r.forced_remainder);
}
