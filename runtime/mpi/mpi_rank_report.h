// SPDX-License-Identifier: LGPL-2.1-or-later
// What every rank of a multi-rank run tells rank 0 at its end for the report: its share,
// the elements it processed, the bytes it moved, its peak memory.
#pragma once

#include "config.h"  // HETPU_HAVE_MPI

#ifdef HETPU_HAVE_MPI

#include <hetpu/divisible.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "runtime/divisible/block_run.h"
#include "runtime/mpi/core/cluster.h"

namespace hetpu {

struct RankTraffic {
    uint64_t data_sent = 0;
    uint64_t data_received = 0;
    uint64_t control_sent = 0;
    uint64_t control_received = 0;
};

// Peak resident memory of this process (getrusage), in bytes.
uint64_t max_rss_bytes();

// Collective on `comm`: every rank's figures land in report->rank_reports on rank 0 (the
// first HETPU_REPORT_MAX_RANKS); report may be null on other ranks.
void gather_rank_reports(MPI_Comm comm, uint64_t share_offset, uint64_t share_count, uint64_t elements,
                         const RankTraffic &traffic, hetpu_divisible_report *report);

// Collective on `comm`: every rank's workers and their totals, rank by rank, on rank 0
// (empty elsewhere).
void gather_workers(MPI_Comm comm, const std::vector<ClusterPu> &mine, const std::vector<WorkerTotals> &mine_totals,
                    std::vector<ClusterPu> &pus, std::vector<WorkerTotals> &totals);

// Appends one worker report per PU (as many as the report holds).
void add_worker_reports(hetpu_divisible_report &report, const std::vector<ClusterPu> &pus,
                        const std::vector<WorkerTotals> &totals);

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
