// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU's calibrated expectation of a divisible job's blocks (BlockRules::codelet_expected_s),
// for planners that would otherwise measure what StarPU already knows. StarPU glue.
#pragma once

#include <hetpu/divisible.h>

#include <vector>

#include "runtime/divisible/core/block_cursor.h"
#include "runtime/divisible/core/block_planner.h"

namespace hetpu {

// Sets rules.calibrated_sizes (the fixed block a built-in policy runs this job in, from
// HETPU_BLOCK or the job's default, and the remainder block) and rules.codelet_expected_s:
// a probe task of `count` elements at the start of the job, built by the job's fill_task
// and never submitted, whose expected length StarPU's model of the codelet gives per
// worker (starpu_task_expected_length; NaN where it is not calibrated). Each size is probed
// once for all workers; the probe's per-block handles are unregistered without a write-back
// (nothing ran). Only for a single process holding the whole job, before its run starts.
void add_codelet_estimates(const hetpu_divisible_job &job, const std::vector<PlannerWorker> &workers,
                           BlockRules &rules);

}  // namespace hetpu
