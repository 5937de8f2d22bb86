// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu cluster-sim`: the cluster file, the network charged under the central planner and
// not under per-node planning, failures recovered with every element's result once.
#include <gtest/gtest.h>

#include <string>

#include "runtime/mpi/core/coordinator_cadence.h"
#include "sched_policies/plbhac/core/plbhac_planner.h"
#include "tools/sim/cluster_sim.h"

using namespace hetpu;
using namespace hetpu::sim;

namespace {

// n nodes of two PUs (one 4x faster), 1,000 elements per second per node in all.
std::string cluster_json(int nodes, const std::string &extra_node = "", double rank0_bw = 1e9)
{
    std::string j = R"({"workload": 60000, "granule": 10, "x_init": 200, "bytes_in": 8000, "bytes_out": 8000,
        "rank0_link": [1e-5, )" +
                    std::to_string(rank0_bw) + R"(],
        "node_types": {"T": {"link": [1e-5, 1e9], "units": [
            {"name": "cpu", "profile": [[100, 0.5]]}, {"name": "gpu", "profile": [[100, 0.125]]}]}},
        "nodes": [)";
    for (int i = 0; i < nodes; ++i)
        j += std::string(i ? ", " : "") + (i == nodes - 1 && !extra_node.empty() ? extra_node : R"({"type": "T"})");
    return j + "]}";
}

PlannerMaker fixed(uint64_t block)
{
    return [block](const std::vector<PlannerWorker> &, const BlockRules &) -> std::unique_ptr<BlockPlanner> {
        return std::make_unique<FixedBlockPlanner>(block);
    };
}

PlannerMaker plbhac()
{
    return [](const std::vector<PlannerWorker> &w, const BlockRules &r) -> std::unique_ptr<BlockPlanner> {
        PlbhacOptions o;
        o.x_init = 200;
        return std::make_unique<PlbhacPlanner>(w, r, o);
    };
}

ClusterOptions exact(bool coverage = false)
{
    ClusterOptions o;
    o.charge_planning_time = false;
    o.check_coverage = coverage;
    return o;
}

std::string error_of(const std::string &json)
{
    try {
        parse_cluster(json);
    } catch (const ScenarioError &e) {
        return e.what();
    }
    return "accepted";
}

}  // namespace

TEST(ClusterSim, BadFilesAreRefusedNamingTheField)
{
    EXPECT_NE(error_of(cluster_json(2, R"({"type": "X"})")).find("unknown node type 'X'"), std::string::npos);
    EXPECT_NE(error_of(R"({"workload": 10, "node_types": {}, "nodes": []})").find("node_types"), std::string::npos);
    std::string zero_fails = cluster_json(1);
    zero_fails.replace(zero_fails.find(R"({"type": "T"})"), 13, R"({"type": "T", "fail_at": 1})");
    EXPECT_NE(error_of(zero_fails).find("node 0 is the coordinator"), std::string::npos);
    EXPECT_NE(error_of(cluster_json(2, R"({"type": "T", "slowdown": -2})")).find("nodes[1].slowdown"),
              std::string::npos);
}

TEST(ClusterSim, TheBoundIsEveryUnitBusyToTheSameEnd)
{
    const ClusterScenario c = parse_cluster(cluster_json(3));
    // 3 nodes x (200 + 800) elements per second: 60,000 elements in 20 s.
    EXPECT_NEAR(cluster_bound(c), 20.0, 0.05);
}

TEST(ClusterSim, TheCentralPlannerPaysRankZerosLinkForEveryRemoteBlock)
{
    const ClusterScenario c = parse_cluster(cluster_json(3));
    const ClusterResult r = simulate_cluster(c, ClusterMode::Central, fixed(100), exact());
    // Two thirds of the elements run off node 0, each with 16 kB over rank 0's link.
    EXPECT_GT(r.rank0_bytes, 0.5 * 60000 * 16000);
    EXPECT_LT(r.rank0_bytes, 0.8 * 60000 * 16000);
    // A rank 0 link slower than the nodes' work: the job waits for it.
    const ClusterScenario slow = parse_cluster(cluster_json(3, "", 2e7));
    const ClusterResult s = simulate_cluster(slow, ClusterMode::Central, fixed(100), exact());
    EXPECT_GT(s.makespan_s, 1.2 * r.makespan_s);
    EXPECT_GE(s.makespan_s, s.rank0_bytes / 2e7) << "the relayed bytes take at least their time on rank 0's link";
}

TEST(ClusterSim, PerNodePlanningKeepsTheDataOffRankZerosLink)
{
    const ClusterScenario c = parse_cluster(cluster_json(3, "", 2e7));
    const ClusterResult central = simulate_cluster(c, ClusterMode::Central, plbhac(), exact());
    const ClusterResult r = simulate_cluster(c, ClusterMode::PerNode, plbhac(), exact(true));
    EXPECT_LT(r.rank0_bytes, 0.2 * central.rank0_bytes) << "only moves rank 0 is a party of";
    EXPECT_LT(r.makespan_s, 1.15 * r.bound_s) << "rank 0's slow link hardly matters";
    EXPECT_LT(r.makespan_s, 0.8 * central.makespan_s);
    for (size_t i = 0; i < r.coverage.size(); ++i)
        ASSERT_EQ(r.coverage[i], 1u) << "element " << i;
}

TEST(ClusterSim, ASlowNodesTailMovesAndEveryResultComesHomeOnce)
{
    const ClusterScenario c = parse_cluster(cluster_json(3, R"({"type": "T", "slowdown": 4})"));
    const ClusterResult moved = simulate_cluster(c, ClusterMode::PerNode, plbhac(), exact(true));
    EXPECT_GT(moved.moves, 0u);
    EXPECT_GT(moved.moved_bytes, 0.0);
    for (size_t i = 0; i < moved.coverage.size(); ++i)
        ASSERT_EQ(moved.coverage[i], 1u) << "element " << i;
    // Without re-sharing the slow node's third takes 4x as long as the others'.
    EXPECT_LT(moved.makespan_s, 0.75 * 4 * 20.0);
}

TEST(ClusterSim, AFailedNodesShareIsComputedAgainElsewhere)
{
    const ClusterScenario c = parse_cluster(cluster_json(3, R"({"type": "T", "fail_at": 8})"));
    const ClusterResult r = simulate_cluster(c, ClusterMode::PerNode, plbhac(), exact(true));
    EXPECT_GE(r.redone_elements, 20000u) << "its whole share: its results died with it";
    for (size_t i = 0; i < r.coverage.size(); ++i)
        ASSERT_EQ(r.coverage[i], 1u) << "element " << i;
    EXPECT_THROW(simulate_cluster(c, ClusterMode::Central, fixed(100), exact()), std::invalid_argument);
}

TEST(ClusterSim, DeterministicPerSeedWithPlanningCharged)
{
    const ClusterScenario c = parse_cluster(cluster_json(3, R"({"type": "T", "slowdown": 2})"));
    ClusterOptions charged;  // the models' cost, never the host's clock
    const ClusterResult a = simulate_cluster(c, ClusterMode::PerNode, plbhac(), charged);
    const ClusterResult b = simulate_cluster(c, ClusterMode::PerNode, plbhac(), charged);
    EXPECT_EQ(a.makespan_s, b.makespan_s);
    EXPECT_EQ(a.planning_s, b.planning_s);
    EXPECT_GT(a.planning_s, 0.0);
}

TEST(ClusterSim, RankZeroIsChargedForEveryReportAtTheRunnersCadence)
{
    const ClusterScenario c = parse_cluster(cluster_json(3, R"({"type": "T", "slowdown": 2})"));
    const ClusterResult r = simulate_cluster(c, ClusterMode::PerNode, plbhac(), ClusterOptions{});
    ASSERT_GT(r.reports, 0u);
    // Every report at its modelled cost, every round at its own.
    EXPECT_NEAR(r.coordinator_s,
                static_cast<double>(r.reports) * kReportHandlingS + r.coordinator_calls * round_cost_s(3), 1e-9);
    // Three ranks at the runner's cadence: one report each per 50 ms, after the first
    // second (plus a few at moves and at the end).
    EXPECT_LT(static_cast<double>(r.reports), 1.2 * 3 * r.makespan_s / 0.05 + 100);
    EXPECT_GT(static_cast<double>(r.reports), 0.5 * 3 * r.makespan_s / 0.05);
}

TEST(ClusterSim, AFirstRunSharesByTheUnitsKinds)
{
    // Node 1's two units are GPUs four times faster: by PU count it would get half the job.
    std::string j = cluster_json(2, R"({"type": "G"})");
    j.replace(j.find(R"("node_types": {)"), 15, R"("node_types": {"G": {"link": [1e-5, 1e9], "units": [
            {"name": "gpu0", "profile": [[100, 0.125]]}, {"name": "gpu1", "profile": [[100, 0.125]]}]}, )");
    const ClusterScenario c = parse_cluster(j);
    ClusterOptions first = exact(true);
    const ClusterResult r = simulate_cluster(c, ClusterMode::PerNode, plbhac(), first);
    EXPECT_LT(r.makespan_s, 1.1 * r.bound_s);
    EXPECT_EQ(r.moves, 0u) << "the shares were right from the start";
    for (size_t i = 0; i < r.coverage.size(); ++i)
        ASSERT_EQ(r.coverage[i], 1u) << "element " << i;
}

TEST(ClusterSim, NoMoveCrossesALinkTooSlowToPay)
{
    // Node 2 is slowed; node 3 is idle early but behind a link 10,000x slower.
    const std::string far = R"({"type": "T", "slowdown": 3}, {"type": "F"})";
    std::string j = cluster_json(3, far);
    j.replace(j.find(R"("node_types": {)"), 15, R"("node_types": {"F": {"link": [5e-3, 1e5], "units": [
            {"name": "cpu", "profile": [[100, 0.5]]}, {"name": "gpu", "profile": [[100, 0.125]]}]}, )");
    const ClusterResult r = simulate_cluster(parse_cluster(j), ClusterMode::PerNode, plbhac(), exact(true));
    std::string pinned = j;
    pinned.replace(pinned.find(R"({"type": "F"})"), 13, R"({"type": "F", "moves": false})");
    const ClusterResult p = simulate_cluster(parse_cluster(pinned), ClusterMode::PerNode, plbhac(), exact());
    EXPECT_GT(r.moves, 0u) << "the slowed node's tail moves to the nodes with fast links";
    EXPECT_LT(r.makespan_s, 1.05 * p.makespan_s) << "as good as keeping the far node out of every move";
    for (size_t i = 0; i < r.coverage.size(); ++i)
        ASSERT_EQ(r.coverage[i], 1u) << "element " << i;
}

TEST(ClusterSim, DeterministicPerSeed)
{
    const ClusterScenario c = parse_cluster(cluster_json(3, R"({"type": "T", "slowdown": 2})"));
    const ClusterResult a = simulate_cluster(c, ClusterMode::PerNode, plbhac(), exact());
    const ClusterResult b = simulate_cluster(c, ClusterMode::PerNode, plbhac(), exact());
    EXPECT_EQ(a.makespan_s, b.makespan_s);
    EXPECT_EQ(a.moves, b.moves);
}
