// SPDX-License-Identifier: LGPL-2.1-or-later
// Discrete-event simulation of a divisible run: the same BlockDispatcher and planners the
// StarPU runner uses, driving simulated units instead of StarPU workers. Lets the papers'
// multi-machine experiments be reproduced at any scale, deterministically for a seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/divisible/core/block_planner.h"
#include "tools/sim/optimum.h"
#include "tools/sim/scenario.h"

namespace hetpu::sim {

struct UnitStats {
    std::string name;
    std::string unit_class;
    unsigned blocks = 0;
    uint64_t elements = 0;
    double busy_s = 0;
    double idle_s = 0;  // makespan - busy
};

struct BlockRecord {
    int unit = -1;
    uint64_t offset = 0;
    uint64_t count = 0;
    double start_s = 0;
    double end_s = 0;
};

struct SimResult {
    std::string policy;
    double makespan_s = 0;   // every element done once (a losing backup copy may still run)
    double busy_end_s = 0;   // every block and copy ended: when the units are free for the next job
    unsigned copies = 0;     // backup copies run
    double lost_copy_s = 0;  // unit time spent on copies whose output was thrown away
    unsigned withdrawn = 0;  // handed-out blocks taken back before their unit took them
    unsigned blocks = 0;
    double planning_s = 0;  // wall time spent in the planner, charged to the units
    bool forced_remainder = false;
    std::vector<UnitStats> units;
    std::vector<BlockRecord> trace;
};

struct SimOptions {
    uint64_t seed = 1;
    // Charge the planner's measured wall time to the unit that asked (as on a real
    // worker, which runs the completion callback), and make completions that come while
    // the planner is busy wait for it (the runtime runs every completion's planning under
    // one lock, but for the refit of the unit's own models, PlannerExtensions::prepare_refit,
    // which it runs before taking the lock). Off for reproducible tests.
    bool charge_planning_time = true;
    // Record every block in SimResult::trace (tests, --trace). Off, a run of millions of
    // one-element blocks (greedy with a tiny block) needs no memory per block.
    bool keep_trace = true;
    // With charge_planning_time: charge every decision (the dispatcher's start and each
    // completion) a modelled cost, decision_base_s + decision_per_unit_s x units, instead of
    // the wall time it took on this host, so that a run depends only on its inputs and seed
    // (decision_base_s < 0: wall time). The bench measures the model's figures.
    double decision_base_s = -1;
    double decision_per_unit_s = 0;
    // Handed-out blocks stay withdrawable until their unit takes them, as under the StarPU
    // glue when a job runs its blocks into private output (all four apps): a withdrawn
    // block, when its unit reaches it, costs that unit its transfer (its inputs are fetched
    // before the runner can skip it) and runs nothing.
    bool withdrawable = true;
};

// Planner-visible description of the units: ids 0..n-1, kind from the unit class.
std::vector<PlannerWorker> planner_workers(const Scenario &scenario);
BlockRules block_rules(const Scenario &scenario);

SimResult simulate(const Scenario &scenario, BlockPlanner &planner, const SimOptions &options);

// The static distribution run as one block per unit, without noise or slowdown.
SimResult simulate_static(const Scenario &scenario, const StaticDistribution &distribution, const std::string &policy);

}  // namespace hetpu::sim
