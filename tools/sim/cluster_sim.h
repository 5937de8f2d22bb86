// SPDX-License-Identifier: LGPL-2.1-or-later
// Discrete-event simulation of a divisible job on a cluster, with the network charged:
// every node's link and rank 0's own link are FIFO resources (latency + bytes / bandwidth),
// so data that crosses them queue behind each other.
//
//   - central: one planner over every PU of every node (the relay runner,
//     runtime/mpi/mpi_run.cpp): a block for a PU off node 0 has its inputs sent from rank 0
//     (rank 0's link, then the node's) and its results sent back the same way.
//   - per-node: a planner per node over its own PUs and its own share
//     (runtime/mpi/mpi_owned_run.cpp); the coordinator hears node-level progress reports and
//     moves unstarted tails between nodes (runtime/mpi/core/node_shares.h), their data over
//     the two nodes' links only. A failed node's work (its whole share: its results die
//     with it) is re-shared among the live nodes, which read its inputs again (charged as
//     the data crossing their own link).
// The coordinator is simulated as it runs: the ranks report at the real runner's cadence,
// rank 0 handles each report and plans with the runner's own core (ShareCoordinator), and
// is charged the modelled cost of both (runtime/mpi/core/coordinator_cadence.h). Planning
// is charged from models, never from the host's clock: deterministic per seed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/divisible/core/block_planner.h"
#include "tools/sim/cluster_scenario.h"

namespace hetpu::sim {

enum class ClusterMode { Central, PerNode };

// Builds a planner for these PUs and rules (the policy under test).
using PlannerMaker =
    std::function<std::unique_ptr<BlockPlanner>(const std::vector<PlannerWorker> &, const BlockRules &)>;

struct ClusterOptions {
    uint64_t seed = 1;
    // Charge each planner call's modelled time to the simulated time of the units it plans
    // for (per node under per-node), and rank 0 the modelled time of every report it
    // handles and every round it plans.
    bool charge_planning_time = true;
    // Count, for every element, how many times its result reached a live owner (tests).
    bool check_coverage = false;
    // Per-node: the initial shares follow the nodes' speeds, as after a first run (the
    // runner keeps them); otherwise what calibrations tell of their units (nominal rates,
    // slowdowns unknown).
    bool known_rates = false;
};

struct ClusterResult {
    std::string mode;
    double makespan_s = 0;
    double bound_s = 0;  // lower bound of the optimum (see cluster_bound)
    unsigned nodes = 0, pus = 0;
    unsigned blocks = 0;
    unsigned moves = 0;
    double planning_s = 0;           // modelled time in the planners (all nodes' under per-node)
    double planning_wall_s = 0;      // the same calls' CPU time on this host (measured)
    double coordinator_s = 0;        // per-node: modelled time of rank 0's reports and rounds
    double coordinator_wall_s = 0;   // the same work's CPU time on this host (measured)
    unsigned coordinator_calls = 0;  // planning rounds
    uint64_t reports = 0;            // reports rank 0 handled
    double rank0_bytes = 0;          // job data through rank 0's link (both directions)
    double moved_bytes = 0;          // per-node: data of moves and re-read inputs
    uint64_t redone_elements = 0;    // per-node: elements computed again after a failure
    std::vector<unsigned> coverage;  // check_coverage: per element, results that reached a live owner
};

// The time every PU would need to finish the workload together with no network, no noise,
// at the slowdown in force from the start and no failure (the job's optimum is no shorter):
// bisection on the common end time.
double cluster_bound(const ClusterScenario &cluster);

// Throws std::invalid_argument for what the mode cannot simulate (a failing node under the
// central planner: its runner has no recovery either).
ClusterResult simulate_cluster(const ClusterScenario &cluster, ClusterMode mode, const PlannerMaker &make_planner,
                               const ClusterOptions &options);

}  // namespace hetpu::sim
