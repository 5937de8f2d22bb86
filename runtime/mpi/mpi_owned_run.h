// SPDX-License-Identifier: LGPL-2.1-or-later
// The per-node multi-rank runner: each rank holds and plans its own share of the job's
// data; rank 0 coordinates per node and re-shares by moving ranges directly between the
// ranks concerned (include/hetpu/mpi.h, hetpu_divisible_run_placed).
#pragma once

#include <hetpu/mpi.h>

#include <vector>

#include "config.h"  // HETPU_HAVE_MPI
#include "runtime/divisible/core/block_cursor.h"
#include "runtime/divisible/core/block_planner.h"
#include "runtime/mpi/core/node_shares.h"

namespace hetpu {

#ifdef HETPU_HAVE_MPI
// Every rank calls it with the same job. `local`: this rank's workers able to run the
// job's codelet. Returns 0 or -errno on every rank.
int run_per_node(const hetpu_divisible_job &job, const hetpu_divisible_placement &placement,
                 hetpu_divisible_report *report, const BlockRules &rules, const std::vector<PlannerWorker> &local,
                 const char *label);

// Collective, the start of run_per_node(): every rank's figures gathered, and the shares
// in rank order, either those the ranks already hold (placement's held_offset/held_count;
// held = true) or the coordinator's initial ones. 0, -ENODEV or -EINVAL (held shares that
// do not tile the job: rank 0 says why), the same on every rank.
int start_shares(const hetpu_divisible_job &job, const hetpu_divisible_placement *placement, const BlockRules &rules,
                 const std::vector<PlannerWorker> &local, const char *label, std::vector<NodeState> &nodes,
                 std::vector<Block> &shares, bool &held);
#endif

}  // namespace hetpu
