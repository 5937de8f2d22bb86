// SPDX-License-Identifier: LGPL-2.1-or-later
// The multi-rank divisible runner (StarPU-MPI): every rank of the job calls it with the same
// job. Rank 0 owns the planner and the dispatcher; its main thread is the only one that
// exchanges control messages (plain MPI on hetpu's own communicator) and posts the
// StarPU-MPI transfers of remote blocks; the other ranks serve the blocks they are given.
#pragma once

#include <hetpu/divisible.h>

#include <vector>

#include "config.h"  // HETPU_HAVE_MPI
#include "runtime/divisible/core/block_cursor.h"
#include "runtime/divisible/core/block_planner.h"

namespace hetpu {

#ifdef HETPU_HAVE_MPI
// `local`: this rank's workers able to run the job's codelet. Returns 0 or -errno on every
// rank (one rank failing fails them all).
int run_multi_rank(const hetpu_divisible_job &job, hetpu_divisible_report *report, const BlockRules &rules,
                   const std::vector<PlannerWorker> &local, const char *label);
#endif

}  // namespace hetpu
