// SPDX-License-Identifier: LGPL-2.1-or-later
// What the hepopta and htpopta policies share: reading the job's profiles, the trade-off
// and the base power from the environment, and the fallback when there are no profiles.
#pragma once

#include <memory>
#include <vector>

#include "runtime/divisible/core/block_planner.h"
#include "sched_policies/pareto/core/pareto_front.h"

namespace hetpu {

// The planner of a divisible job under hepopta (Dynamic) or htpopta (Total). nullptr (run
// fails with -EINVAL) for a bad HETPU_TRADEOFF / HETPU_BASE_POWER or a malformed profile
// file, each reported on stderr; a FixedBlockPlanner (load-balanced by the first idle worker
// taking the next block) when the job has no usable profiles, also said on stderr.
std::unique_ptr<BlockPlanner> make_pareto_policy_planner(const char *policy, EnergyObjective objective,
                                                         const std::vector<PlannerWorker> &workers,
                                                         const BlockRules &rules);

}  // namespace hetpu
