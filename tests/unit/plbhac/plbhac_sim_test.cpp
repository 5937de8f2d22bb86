// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC planner: In simulation: the paper's multi-machine comparison and adaptability.
#include "tests/unit/plbhac/plbhac_planner_test_util.h"

using namespace hetpu;
using namespace hetpu::plbhac_test;

TEST(PlbhacSim, NearOptimumAndBetterThanGreedyAndHdss)
{
    const sim::Scenario s = three_machines();
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const double optimum = sim::optimum_distribution(units, s.workload, s.granule).makespan_s;
    ASSERT_GT(optimum, 10.0);
    ASSERT_LT(optimum, 20.0);
    for (uint64_t seed : {1u, 2u}) {
        PlbhacOptions po;
        po.x_init = s.x_init;
        PlbhacPlanner plb(sim::planner_workers(s), sim::block_rules(s), po);
        const sim::SimResult rp = sim::simulate(s, plb, {seed, false});
        FixedBlockPlanner greedy(s.x_init);
        const sim::SimResult rg = sim::simulate(s, greedy, {seed, false});
        HdssOptions ho;
        ho.x_init = s.x_init;
        HdssPlanner hdss(sim::planner_workers(s), sim::block_rules(s), ho);
        const sim::SimResult rh = sim::simulate(s, hdss, {seed, false});
        RecordProperty("seed" + std::to_string(seed) + "_plbhac_over_optimum", std::to_string(rp.makespan_s / optimum));
        std::printf("[ sim      ] seed %u: optimum %.3f s, plb-hac %.3f s (x%.3f, %u blocks, %zu solves), "
                    "greedy %.3f s (x%.3f), hdss %.3f s (x%.3f)\n",
                    static_cast<unsigned>(seed), optimum, rp.makespan_s, rp.makespan_s / optimum, rp.blocks,
                    plb.solve_times_s().size(), rg.makespan_s, rg.makespan_s / optimum, rh.makespan_s,
                    rh.makespan_s / optimum);
        EXPECT_FALSE(rp.forced_remainder);
        EXPECT_LE(rp.makespan_s, 1.10 * optimum) << "seed " << seed;
        EXPECT_LT(rp.makespan_s, rg.makespan_s) << "seed " << seed;
        EXPECT_LT(rp.makespan_s, rh.makespan_s) << "seed " << seed;
    }
}

TEST(PlbhacSim, AdaptsToASlowdown)
{
    // The fastest unit becomes 2.5 times slower mid-run. Its model notices after a few
    // slow blocks (the online model treats the first ones as possible spikes), and the
    // next solves give it smaller blocks: its share of a step should fall from ~200/460
    // to ~80/340 of the step, i.e. its blocks to ~0.54 of their size.
    sim::Scenario s = three_machines(8'000'000);
    const double t_slow = 6.0;  // the run takes ~18 s with the slowdown
    s.units[0].slowdown = {{t_slow, 2.5}};
    PlbhacOptions po;
    po.x_init = s.x_init;
    po.tail_fraction = 1.0;  // no tail shrink: any size change comes from the models
    po.steps = 32;           // blocks of ~0.4 s, so that the change is seen in time
    po.step_error = 0;       // and no fewer for the GPUs' launch cost (plbhac_overhead_steps)
    PlbhacPlanner plb(sim::planner_workers(s), sim::block_rules(s), po);
    Spy spy(plb);
    spy.log.reserve(10000);
    const sim::SimResult r = sim::simulate(s, spy, {1, false});
    std::vector<double> before, after;
    for (const Assigned &a : spy.log) {
        if (a.worker != 0 || a.phase != "execution")
            continue;
        if (a.end_s <= t_slow)
            before.push_back(static_cast<double>(a.size));
        else if (a.start_s >= t_slow)
            after.push_back(static_cast<double>(a.size));
    }
    if (!after.empty())
        after.pop_back();  // the last block may be the remainder
    ASSERT_GE(before.size(), 4u);
    ASSERT_GE(after.size(), 8u);
    const std::vector<double> last(after.end() - 4, after.end());
    std::printf("[ sim      ] slowdown x2.5 at %.1f s on A.gpu0: mean block %.0f before, %.0f after (x%.2f), "
                "last four %.0f (x%.2f); makespan %.3f s\n",
                t_slow, mean(before), mean(after), mean(after) / mean(before), mean(last), mean(last) / mean(before),
                r.makespan_s);
    EXPECT_LT(mean(after), 0.8 * mean(before));
    EXPECT_NEAR(mean(last) / mean(before), 0.54, 0.1) << "converged to the new speed";
}
