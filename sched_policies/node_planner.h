// SPDX-License-Identifier: LGPL-2.1-or-later
// A load-balancing policy's planner on the real node (the StarPU runners): settings from
// the process environment, messages on stderr ("hetpu: <policy>: ..."), models kept under
// $HETPU_HOME for this host, and the plan's trace appended to HETPU_TRACE for a policy that
// records one. Pure C++: load_balancing.cpp hands it to StarPU.
#pragma once

#include <memory>
#include <vector>

#include "sched_policies/planner_catalog.h"

namespace hetpu {

// The planner of `policy` for one job; null (the job fails) after saying why on stderr.
std::unique_ptr<BlockPlanner> make_node_planner(const PlannerPolicy &policy, const std::vector<PlannerWorker> &workers,
                                                const BlockRules &rules);

}  // namespace hetpu
