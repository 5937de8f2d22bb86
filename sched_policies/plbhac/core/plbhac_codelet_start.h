// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC's first models from StarPU's own calibration, for a job hetpu has never run on
// this node. A user who ran the application under dmda has StarPU history models of its
// block codelet in STARPU_HOME: the mean time of each block size StarPU saw, per worker
// kind. Those are measurements PLB-HAC would otherwise take again in its training phase,
// with the slow units' training blocks costing most on a node where one unit is 10-100x
// faster than the rest. Pure C++: the StarPU side is BlockRules::codelet_expected_s.
#pragma once

#include <vector>

#include "runtime/divisible/core/block_planner.h"
#include "sched_policies/plbhac/core/plbhac_warm_start.h"

namespace hetpu {

// Fills `memory` with, for every worker, an execution model of the points (size, seconds)
// StarPU expects at rules.calibrated_sizes (finite, positive expectations only). True when
// every worker got at least one point; otherwise (some worker StarPU never calibrated at
// these sizes, no estimator) `memory` is left untouched and the planner trains: the
// training ratio only makes sense for all PUs together (plbhac_warm_start). A PU with one
// point is priced in proportion to it until its own blocks add sizes (plbhac_narrow).
bool plbhac_memory_from_codelet_model(const std::vector<PlannerWorker> &workers, const BlockRules &rules,
                                      PlbhacMemory &memory);

}  // namespace hetpu
