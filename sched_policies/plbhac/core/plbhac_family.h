// SPDX-License-Identifier: LGPL-2.1-or-later
// plb-hac's planner family (planner_catalog.h): options from HETPU_PLBHAC_* (first block
// from the context when HETPU_PLBHAC_XINIT names none), models kept for later jobs
// (plbhac_model_shelf.h; HETPU_PLBHAC_KEEP_MODELS=0: not between the jobs of a process,
// HETPU_PLBHAC_MODELS=off: not on disk), a first run started from StarPU's calibration of
// the codelet where the rules carry one (HETPU_PLBHAC_STARPU_MODELS=0: never), and one
// trace line per completed block (plbhac_trace.h) where the context takes a trace.
#pragma once

#include <memory>
#include <vector>

#include "sched_policies/planner_catalog.h"

namespace hetpu {

std::unique_ptr<BlockPlanner> make_plbhac_family(const PlannerContext &context,
                                                 const std::vector<PlannerWorker> &workers, const BlockRules &rules);

}  // namespace hetpu
