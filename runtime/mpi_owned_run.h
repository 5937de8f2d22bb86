// SPDX-License-Identifier: LGPL-2.1-or-later
// The per-node multi-rank runner: each rank holds and plans its own share of the job's
// data; rank 0 coordinates per node and re-shares by moving ranges directly between the
// ranks concerned (include/hetpu/mpi.h, hetpu_divisible_run_placed).
#pragma once

#include <hetpu/mpi.h>

#include <vector>

#include "config.h"  // HETPU_HAVE_MPI
#include "runtime/core/block_cursor.h"
#include "runtime/core/block_planner.h"

namespace hetpu {

#ifdef HETPU_HAVE_MPI
// Every rank calls it with the same job. `local`: this rank's workers able to run the
// job's codelet. Returns 0 or -errno on every rank.
int run_per_node(const hetpu_divisible_job &job, const hetpu_divisible_placement &placement,
                 hetpu_divisible_report *report, const BlockRules &rules, const std::vector<PlannerWorker> &local,
                 const char *label);
#endif

}  // namespace hetpu
