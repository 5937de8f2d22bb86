// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC planner: The final solve, whose shares end the job, and its straggle hedge.
#include "sched_policies/plbhac/core/plbhac_final.h"
#include "tests/unit/plbhac/plbhac_planner_test_util.h"

using namespace hetpu;
using namespace hetpu::plbhac_test;

TEST(PlbhacFinal, EachPuTakesItsFinalShareOnceAndAllFinishTogether)
{
    // The final solve shares out everything left, each share sized to end with the others
    // after the PU's queue. PUs run two blocks ahead, so a PU a step behind reaches that
    // solution from an earlier step; it once took its share there and again at the final
    // step, and with 4 steps the run ended 9 s after the others (seen in simulation).
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.x_init = 16384;
    s.units = {unit("a.gpu0", "gpu", 100e3, 0.05, 0.005, 5e-7, 0.02),
               unit("b.gpu0", "gpu", 80e3, 0.1, 0.005, 6e-7, 0.02),
               unit("c.gpu0", "gpu", 150e3, 0.03, 0.005, 3e-7, 0.02),
               unit("a.cpu", "cpu", 10e3, 0, 0, 0, 0.03),
               unit("b.cpu", "cpu", 12e3, 0, 0, 0, 0.03),
               unit("c.cpu", "cpu", 8e3, 0, 0, 0, 0.03)};
    for (unsigned seed = 1; seed <= 8; ++seed) {
        PlbhacOptions o;
        o.x_init = s.x_init;
        o.steps = 4;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        Spy spy(p);
        spy.log.reserve(10000);
        const sim::SimResult r = sim::simulate(s, spy, {seed, false});
        unsigned final_step = 0;
        for (const Assigned &a : spy.log)
            final_step = std::max(final_step, a.step);
        std::map<int, int> final_blocks;
        std::map<int, double> last_end;
        uint64_t total = 0;
        for (const Assigned &a : spy.log) {
            total += a.size;
            last_end[a.worker] = std::max(last_end[a.worker], a.end_s);
            if (a.step == final_step && a.phase != "training")
                ++final_blocks[a.worker];
        }
        EXPECT_EQ(total, s.workload);
        for (const auto &[w, n] : final_blocks)
            EXPECT_LE(n, 1) << "seed " << seed << ": PU " << w << " took the final share " << n << " times";
        double first_idle = r.makespan_s;
        for (const auto &[w, end] : last_end)
            first_idle = std::min(first_idle, end);
        EXPECT_LT(r.makespan_s - first_idle, 0.08 * r.makespan_s) << "seed " << seed << ": PUs must finish together";
    }
}

TEST(PlbhacFinal, ASlowdownAfterTheFinalSolveResharesWhatIsNotTaken)
{
    // One step: the first solve is the final one. PU 0 takes its share; PU 1 then reports a
    // block 4x slower than its model. Its old share would run ~4x its predicted time while
    // PU 0 idles; re-solving what is not taken gives PU 1 less and PU 0 the rest.
    const std::vector<double> spe{1e-5, 1e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.steps = 1;
    o.trust = 0;
    o.gap_threshold_s = 1e9;
    const uint64_t total = 400'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    train_linear(p, spe, total);
    uint64_t rem = total - 20000;
    const uint64_t a0 = p.next_block(0, rem);
    ASSERT_GT(a0, 0u);
    rem -= a0;
    const uint64_t reserved = rem;
    p.block_done(done(1, 16384, 4 * spe[1] * 16384));
    const uint64_t a1 = p.next_block(1, rem);
    EXPECT_LT(static_cast<double>(a1), 0.6 * static_cast<double>(reserved)) << "sized for the slower PU";
    rem -= a1;
    EXPECT_GT(p.next_block(0, rem), 0u) << "the faster PU takes what the slowed one no longer can";
}

TEST(PlbhacFinal, AStepThatWouldOutlastTheJobBecomesTheFinalOne)
{
    // Few, long steps (the fixed-cost rule's minimum of 2) and two blocks queued per PU: a PU
    // entering a regular step near the end commits to a block that outlasts what the others
    // have left, and they idle while it runs (seeds 1 and 5 here: 11.08 s and 10.88 s against
    // 10.38 s and 10.66 s). With final_past_end that step is solved as the final one, every
    // queue counted. Deterministic runs (no planning time charged), compared seed by seed.
    sim::Scenario s;
    s.workload = 6'000'000;
    s.granule = 64;
    s.x_init = 4096;
    s.units = {unit("A.gpu0", "gpu", 200e3, 0.2, 0, 0, 0.03), unit("B.gpu0", "gpu", 150e3, 0.2, 0, 0, 0.03),
               unit("C.gpu0", "gpu", 250e3, 0.2, 0, 0, 0.03), unit("D.gpu0", "gpu", 100e3, 0.2, 0, 0, 0.03),
               unit("A.cpu", "cpu", 20e3, 0.01, 0, 0, 0.03),  unit("B.cpu", "cpu", 15e3, 0.01, 0, 0, 0.03)};
    double sum[2] = {0, 0};
    for (uint64_t seed = 1; seed <= 6; ++seed) {
        RunEnds e[2];
        for (int on : {0, 1}) {
            PlbhacOptions o;
            o.x_init = s.x_init;
            o.min_steps = 2;
            o.step_error = 0.05;
            o.final_past_end = on;
            e[on] = run_ends(s, o, seed);
            sum[on] += e[on].makespan_s;
        }
        EXPECT_LT(e[1].makespan_s, 1.005 * e[0].makespan_s) << "seed " << seed;
    }
    EXPECT_LT(sum[1], 0.99 * sum[0]) << "mean makespan " << sum[1] / 6 << " s against " << sum[0] / 6 << " s";
}

TEST(PlbhacFinal, EachShareIsResizedWithWhatWasMeasuredBeforeItIsTaken)
{
    // GPUs whose time per element falls with the block size (a fixed cost that saturates at
    // 8k elements, as GRN's): their queued blocks, priced by curves extrapolated beyond the
    // sizes they have run, and with 4% timing noise, end earlier or later than the final
    // solve assumed. Re-solving the untaken shares when a PU comes for its own after such a
    // miss brings the PUs' end times closer: mean spread 0.48 s without, 0.33 s with, over
    // 6 seeds.
    sim::Scenario s;
    s.workload = 1'800'000;
    s.granule = 64;
    s.x_init = 1024;
    auto gpu = [](const std::string &name, double rate, double fixed, double saturation) {
        sim::UnitSpec u = unit(name, "gpu", rate, 0, 0, 0, 0.04);
        u.profile.clear();
        for (double x = 64; x <= (1 << 23); x *= 2)
            u.profile.push_back({x, x / rate + fixed * x / (x + saturation)});
        return u;
    };
    s.units = {gpu("A.gpu0", 40e3, 0.2, 8192),
               gpu("B.gpu0", 30e3, 0.2, 8192),
               gpu("C.gpu0", 50e3, 0.2, 8192),
               gpu("D.gpu0", 35e3, 0.2, 8192),
               unit("A.cpu", "cpu", 2e3, 0.01, 0, 0, 0.03),
               unit("B.cpu", "cpu", 1.5e3, 0.01, 0, 0, 0.03)};
    double spread[2] = {0, 0}, makespan[2] = {0, 0};
    for (uint64_t seed = 1; seed <= 6; ++seed)
        for (int on : {0, 1}) {
            PlbhacOptions o;
            o.x_init = s.x_init;
            o.reshare_final = on;
            const RunEnds e = run_ends(s, o, seed);
            spread[on] += e.spread_s;
            makespan[on] += e.makespan_s;
        }
    std::printf("[ sim      ] mean end-time spread %.3f s without the re-solve, %.3f s with; mean makespan %.3f s, "
                "%.3f s\n",
                spread[0] / 6, spread[1] / 6, makespan[0] / 6, makespan[1] / 6);
    EXPECT_LT(spread[1], 0.85 * spread[0]);
    EXPECT_LE(makespan[1], makespan[0]);
}

TEST(PlbhacStraggleHedge, NoisyCpusGetLessOfTheFinalShareBesideASteadyGpu)
{
    const sim::Scenario s = noisy_cpus_beside_a_steady_gpu();
    const auto cpu_share = [&](bool hedge, double cpu_spread, unsigned *hedged, size_t gpu_misses = 16) {
        PlbhacOptions o;
        o.memory = saved_models(s, cpu_spread, 0.02);
        o.memory->pus.back().misses.resize(gpu_misses);
        o.hedge_straggle = hedge;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        EXPECT_TRUE(p.warm_started());
        uint64_t remaining = s.workload, cpus = 0;
        for (int w = 15; w >= 0; --w) {  // the GPU asks first: the one solve is the final one
            const uint64_t b = p.next_block(w, remaining);
            remaining -= b;
            cpus += w < 15 ? b : 0;
        }
        EXPECT_EQ(remaining, 0u) << "one step: everything shared out at once";
        *hedged = p.hedged_solves();
        return static_cast<double>(cpus) / static_cast<double>(s.workload);
    };
    unsigned hedged_off = 0, hedged_on = 0, hedged_steady = 0, hedged_unknown = 0;
    const double off = cpu_share(false, 0.2, &hedged_off);
    const double on = cpu_share(true, 0.2, &hedged_on);
    const double steady = cpu_share(true, 0.02, &hedged_steady);
    const double unknown = cpu_share(true, 0.2, &hedged_unknown, 1);
    std::printf("[ plan     ] the 15 CPUs' final share: %.1f%% as solved, %.1f%% hedged (20%% scatter), %.1f%% with "
                "2%% scatter\n",
                100 * off, 100 * on, 100 * steady);
    EXPECT_GT(off, 0.06) << "as solved, the CPUs get their worth (8% of the node)";
    EXPECT_LT(on, 0.75 * off) << "hedged, a 20%-scatter CPU's share is worth less than its straggle";
    EXPECT_EQ(hedged_off, 0u);
    EXPECT_EQ(hedged_on, 1u);
    // CPUs as steady as the GPU: nothing to win back, the plan stands as solved.
    EXPECT_EQ(hedged_steady, 0u);
    EXPECT_DOUBLE_EQ(steady, off);
    // The GPU's spread unknown (one miss): nothing to weigh the CPUs' against.
    EXPECT_EQ(hedged_unknown, 0u);
    EXPECT_DOUBLE_EQ(unknown, off);
}

TEST(PlbhacStraggleHedge, WarmRunsOfANoisyNodeEndEarlierHedged)
{
    // Runs 2-4 of the job, each from the models the previous one left (misses included),
    // 8 seeds: the hedged plans end earlier on average, since the job no longer waits for
    // the unluckiest of 15 noisy CPUs. Deterministic: seeded noise, planning time not charged.
    const sim::Scenario s = noisy_cpus_beside_a_steady_gpu();
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const double optimum = sim::optimum_distribution(units, s.workload, s.granule).makespan_s;
    double warm[2] = {0, 0};
    unsigned hedged = 0, runs = 0;
    for (uint64_t seed = 1; seed <= 8; ++seed)
        for (int on : {0, 1}) {
            auto memory = std::make_shared<PlbhacMemory>();
            for (int run = 1; run <= 4; ++run) {
                PlbhacOptions o;
                o.x_init = s.x_init;
                o.memory = memory;
                o.hedge_straggle = on;
                PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
                const sim::SimResult r = sim::simulate(s, p, {seed * 100 + run, false});
                if (run >= 2) {
                    EXPECT_TRUE(p.warm_started());
                    warm[on] += r.makespan_s / optimum;
                    runs += on;
                    hedged += on ? (p.hedged_solves() > 0) : 0;
                }
            }
        }
    std::printf("[ sim      ] warm runs: x%.3f of the optimum as solved, x%.3f hedged (%u of %u runs hedged)\n",
                warm[0] / runs, warm[1] / runs, hedged, runs);
    EXPECT_LT(warm[1], 0.92 * warm[0]);
    EXPECT_GE(hedged, runs / 2);
}

TEST(PlbhacStraggleHedge, ScalesPriceEachPuByItsKindsSpread)
{
    EXPECT_EQ(plbhac_hedge_scales(2.0, {0.0, 0.1, 0.25}), (std::vector<double>{1.0, 1.2, 1.5}));
    EXPECT_EQ(plbhac_hedge_scales(0.0, {0.3}), (std::vector<double>{1.0}));
}
