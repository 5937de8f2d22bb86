// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC's cold start by a ladder: probes, promises taken back, backups at the tail.
#include "sched_policies/plbhac/core/plbhac_ladder.h"
#include "sched_policies/plbhac/core/plbhac_warm_start.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "runtime/divisible/core/block_dispatcher.h"
#include "tools/sim/optimum.h"
#include "tools/sim/simulated_unit.h"
#include "tools/sim/simulator.h"

using namespace hetpu;

namespace {

sim::UnitSpec unit(const std::string &name, const std::string &cls, double per_element_s, double fixed_s,
                   double unseen_s, double noise = 0)
{
    sim::UnitSpec u;
    u.name = name;
    u.unit_class = cls;
    u.profile = {{1, fixed_s + per_element_s}, {1e9, fixed_s + per_element_s * 1e9}};
    u.unseen_s = unseen_s;
    u.noise = noise;
    return u;
}

// A GPU node in miniature: `cpus` CPUs `ratio` times slower per element than one GPU.
sim::Scenario node(int cpus, int gpus, double ratio, uint64_t workload)
{
    sim::Scenario s;
    s.workload = workload;
    s.granule = 1;
    for (int i = 0; i < cpus; ++i)
        s.units.push_back(unit("cpu" + std::to_string(i), "cpu", 1e-6 * ratio, 2e-5, 5e-4, 0.2));
    for (int i = 0; i < gpus; ++i)
        s.units.push_back(unit("gpu" + std::to_string(i), "gpu", 1e-6, 4e-4, 6.5e-3, 0.02));
    return s;
}

std::map<int, uint64_t> elements_by_unit(const sim::SimResult &r)
{
    std::map<int, uint64_t> e;
    for (const auto &b : r.trace)
        e[b.unit] += b.count;
    return e;
}

}  // namespace

TEST(PlbhacLadder, EveryUnitStartsWithAProbeAndThePromisesStayBehind)
{
    const sim::Scenario s = node(2, 2, 100, 4'096'000);
    PlbhacLadderPlanner planner(sim::planner_workers(s), sim::block_rules(s), PlbhacOptions{});
    const uint64_t probe = 4'096'000 / (4 * 1024);
    EXPECT_EQ(planner.probe(), probe);
    BlockDispatcher d(sim::block_rules(s), planner, {0, 1, 2, 3});
    d.set_backup_all(false);
    const std::vector<Assignment> first = d.start();
    std::map<int, std::vector<uint64_t>> handed;
    for (const Assignment &a : first)
        handed[a.worker].push_back(a.count);
    // CPUs: only the probe; GPUs (a hand-out lead to cover): the probe and the next rung.
    EXPECT_EQ(handed[0], std::vector<uint64_t>{probe});
    EXPECT_EQ(handed[1], std::vector<uint64_t>{probe});
    EXPECT_EQ(handed[2], (std::vector<uint64_t>{probe, 8 * probe}));
    EXPECT_EQ(handed[3], (std::vector<uint64_t>{probe, 8 * probe}));
    // 8x and 64x behind each CPU's probe, 64x behind each GPU's: promised, not handed out.
    EXPECT_EQ(d.remaining(), 4'096'000 - 4 * probe - 2 * 8 * probe);
    EXPECT_FALSE(d.finished());
}

TEST(PlbhacLadder, ASlowUnitsPromisesAreTakenBack)
{
    // CPUs 2000x slower than the GPU: once measured, their ladder's 8x and 64x rungs would
    // end long after the GPU ends everything else, so they go back to the GPU.
    const sim::Scenario s = node(2, 1, 2000, 2'000'000);
    PlbhacLadderPlanner planner(sim::planner_workers(s), sim::block_rules(s), PlbhacOptions{});
    const sim::SimResult r = sim::simulate(s, planner, {1, false});
    const std::map<int, uint64_t> e = elements_by_unit(r);
    const uint64_t probe = planner.probe();
    EXPECT_LT(e.at(0), 3 * probe) << "CPU 0 ran more than its probe and a small share";
    EXPECT_LT(e.at(1), 3 * probe) << "CPU 1 ran more than its probe and a small share";
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const double optimum = sim::optimum_distribution(units, s.workload, s.granule).makespan_s;
    EXPECT_LT(r.makespan_s, 1.3 * optimum);
}

TEST(PlbhacLadder, TheLadderGrowsAFastUnitsBlocksBeyondItsProbe)
{
    // Equal units: after the probes, blocks grow (no block beyond 16x the largest run, a
    // fraction of the share at a time) instead of one giant block or probes forever.
    sim::Scenario s;
    s.workload = 1'000'000;
    for (int i = 0; i < 4; ++i)
        s.units.push_back(unit("cpu" + std::to_string(i), "cpu", 1e-6, 1e-5, 0));
    PlbhacLadderPlanner planner(sim::planner_workers(s), sim::block_rules(s), PlbhacOptions{});
    const sim::SimResult r = sim::simulate(s, planner, {1, false});
    uint64_t largest = 0;
    for (const auto &b : r.trace)
        largest = std::max(largest, b.count);
    EXPECT_GT(largest, 8 * planner.probe());
    EXPECT_LT(r.blocks, 60u);
    EXPECT_LT(r.makespan_s, 1.05 * (1e-6 * 1'000'000 / 4 + 1e-5));
}

TEST(PlbhacLadder, ABackupCopyEndsTheJobWhenAProbeOutlastsIt)
{
    // One CPU so slow that its probe alone outlasts the GPU's whole job: only a copy of the
    // probe on the GPU ends the job early; the CPU stays busy to the probe's end.
    const sim::Scenario s = node(1, 1, 1e6, 1'024'000);
    PlbhacLadderPlanner planner(sim::planner_workers(s), sim::block_rules(s), PlbhacOptions{});
    const sim::SimResult r = sim::simulate(s, planner, {1, false});
    const double cpu_probe_s = 1e-6 * 1e6 * static_cast<double>(planner.probe());
    EXPECT_GE(r.copies, 1u);
    EXPECT_LT(r.makespan_s, 0.1 * cpu_probe_s);
    EXPECT_GT(r.busy_end_s, 0.5 * cpu_probe_s) << "the losing probe runs to its end";
    EXPECT_GT(r.lost_copy_s, 0.0);
}

TEST(PlbhacLadder, SavesModelsAWarmStartCanUse)
{
    const sim::Scenario s = node(2, 1, 50, 1'000'000);
    PlbhacOptions o;
    o.memory = std::make_shared<PlbhacMemory>();
    {
        PlbhacLadderPlanner planner(sim::planner_workers(s), sim::block_rules(s), o);
        sim::simulate(s, planner, {1, false});
    }
    ASSERT_EQ(o.memory->pus.size(), 3u);
    for (const auto &pu : o.memory->pus)
        EXPECT_GT(pu.exec.size(), 0u) << "worker " << pu.worker;
}

TEST(PlbhacLadder, PlanningCostChargedFromItsModelIsDeterministic)
{
    const sim::Scenario s = node(4, 1, 100, 1'000'000);
    sim::SimOptions o{3, true, false};
    o.decision_base_s = 20e-6;
    o.decision_per_unit_s = 1e-6;
    PlbhacLadderPlanner a(sim::planner_workers(s), sim::block_rules(s), PlbhacOptions{});
    PlbhacLadderPlanner b(sim::planner_workers(s), sim::block_rules(s), PlbhacOptions{});
    const sim::SimResult ra = sim::simulate(s, a, o), rb = sim::simulate(s, b, o);
    EXPECT_EQ(ra.makespan_s, rb.makespan_s);
    // One decision at the start and one per completion (withdrawn blocks' too), each 20 + 5 x 1 us.
    EXPECT_NEAR(ra.planning_s, (1 + ra.blocks + ra.withdrawn) * 25e-6, 1e-9);
}

TEST(PlbhacLadder, BlocksQueuedBehindAUnitThatSlowsDownAreWithdrawn)
{
    // Two GPUs with a hand-out lead, so each keeps a block queued behind its running one;
    // after 50 ms one turns 20x slower. What it has queued but not taken goes to the other
    // (withdrawn), instead of waiting behind its slow block.
    sim::Scenario s = node(0, 2, 1, 400'000);
    s.units[1].slowdown = {{0.05, 20}};
    double makespan[2] = {0, 0};
    unsigned withdrawn[2] = {0, 0};
    for (bool withdrawable : {false, true}) {
        PlbhacLadderPlanner planner(sim::planner_workers(s), sim::block_rules(s), PlbhacOptions{});
        sim::SimOptions o{1, false};
        o.withdrawable = withdrawable;
        const sim::SimResult r = sim::simulate(s, planner, o);
        makespan[withdrawable] = r.makespan_s;
        withdrawn[withdrawable] = r.withdrawn;
        uint64_t elements = 0;
        for (const auto &b : r.trace)
            elements += b.count;
        EXPECT_GE(elements, s.workload);
    }
    EXPECT_EQ(withdrawn[0], 0u);
    EXPECT_GE(withdrawn[1], 1u);
    // What withdrawals gain on GPU nodes is measured by bench/plbhac_cold_start_sim.py; here
    // the running block dominates, and taking back the one behind it must not cost time.
    EXPECT_LT(makespan[1], 1.02 * makespan[0]) << "withdrawn: " << withdrawn[1];
    std::printf("[ sim      ] one GPU 20x slower after 50 ms: makespan %.3f s withdrawing (%u withdrawn), %.3f s "
                "committed once handed out\n",
                makespan[1], withdrawn[1], makespan[0]);
}

TEST(PlbhacLadder, AWarmStartSkipsTheProbesAndFollowsANodeSlowerThanItsModels)
{
    const sim::Scenario fast = node(2, 1, 50, 4'000'000);
    PlbhacOptions o;
    o.memory = std::make_shared<PlbhacMemory>();
    {
        PlbhacLadderPlanner cold(sim::planner_workers(fast), sim::block_rules(fast), o);
        sim::simulate(fast, cold, {1, false});
    }
    ASSERT_EQ(o.memory->pus.size(), 3u);
    // The same node again: no probe; every unit's first block is a share of the job.
    {
        PlbhacLadderPlanner warm(sim::planner_workers(fast), sim::block_rules(fast), o);
        EXPECT_TRUE(warm.warm_started());
        BlockDispatcher d(sim::block_rules(fast), warm, {0, 1, 2});
        d.set_backup_all(false);
        for (const Assignment &a : d.start())
            EXPECT_GT(a.count, 8 * warm.probe()) << "worker " << a.worker;
    }
    // A node twice as slow as the models say: the first blocks rescale them.
    sim::Scenario slow = fast;
    for (auto &u : slow.units)
        for (auto &[x, t] : u.profile)
            t *= 2;
    std::vector<sim::SimulatedUnit> units(slow.units.begin(), slow.units.end());
    const double optimum = sim::optimum_distribution(units, slow.workload, slow.granule).makespan_s;
    PlbhacLadderPlanner stale(sim::planner_workers(slow), sim::block_rules(slow), o);
    const sim::SimResult r = sim::simulate(slow, stale, {1, false});
    EXPECT_LT(r.makespan_s, 1.15 * optimum);
    std::printf("[ models   ] warm start on a node 2x slower than its models: x%.3f of the optimum\n",
                r.makespan_s / optimum);
}

TEST(PlbhacLadder, AUnitStillBusyWithAnEarlierJobsCopyGetsLess)
{
    // Two equal CPUs; the models of a first run; the second run starts while CPU 1 still
    // runs a losing copy of the first for about half of the new job's length.
    sim::Scenario s;
    s.workload = 1'000'000;
    for (int i = 0; i < 2; ++i)
        s.units.push_back(unit("cpu" + std::to_string(i), "cpu", 1e-6, 1e-5, 0));
    PlbhacOptions o;
    o.memory = std::make_shared<PlbhacMemory>();
    {
        PlbhacLadderPlanner cold(sim::planner_workers(s), sim::block_rules(s), o);
        sim::simulate(s, cold, {1, false});
    }
    const double job_s = 1e-6 * 1'000'000 / 2;
    std::map<int, uint64_t> first_share[2];  // elements handed out at the start, by worker
    for (bool busy : {false, true}) {
        PlbhacLadderPlanner warm(sim::planner_workers(s), sim::block_rules(s), o);
        ASSERT_TRUE(warm.warm_started());
        BlockDispatcher d(sim::block_rules(s), warm, {0, 1});
        d.set_backup_all(false);
        if (busy)
            d.set_busy_until(1, 0.5 * job_s);
        for (const Assignment &a : d.start())
            first_share[busy][a.worker] += a.count;
    }
    EXPECT_NEAR(static_cast<double>(first_share[0][1]), static_cast<double>(first_share[0][0]),
                0.05 * static_cast<double>(first_share[0][0]))
        << "both free: equal first blocks";
    // Ending together: CPU 0 takes T / 1 us, CPU 1 (T - 0.25 s) / 1 us, so T = 0.625 s and the
    // shares are 625,000 and 375,000 elements, each handed out in the same fraction at first.
    EXPECT_NEAR(static_cast<double>(first_share[1][1]) / static_cast<double>(first_share[1][0]), 0.6, 0.05)
        << "the busy CPU's share starts after its copy";
}
