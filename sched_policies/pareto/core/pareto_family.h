// SPDX-License-Identifier: LGPL-2.1-or-later
// The planner families of hepopta (EnergyObjective::Dynamic) and htpopta (Total),
// planner_catalog.h: one block per processor, sized by the point of the exact Pareto front
// that HETPU_TRADEOFF picks (time | energy | slowdown<=X%, default slowdown<=5%), computed
// from the context's calibrated profiles, else from the job's profile file
// $HETPU_HOME/profiles/<job>.csv (fronts kept under $HETPU_HOME/fronts; HETPU_FRONT_CACHE=0
// always searches). htpopta's static power: HETPU_BASE_POWER, else the profiles'.
//
// Null (the job fails) for a bad setting or a malformed profile file, said through the
// context; a FixedBlockPlanner (the first idle worker takes the next block) when the job
// has no usable profiles or no plan, also said.
#pragma once

#include <memory>
#include <vector>

#include "sched_policies/planner_catalog.h"

namespace hetpu {

std::unique_ptr<BlockPlanner> make_hepopta_family(const PlannerContext &context,
                                                  const std::vector<PlannerWorker> &workers, const BlockRules &rules);
std::unique_ptr<BlockPlanner> make_htpopta_family(const PlannerContext &context,
                                                  const std::vector<PlannerWorker> &workers, const BlockRules &rules);

}  // namespace hetpu
