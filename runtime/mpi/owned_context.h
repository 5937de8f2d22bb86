// SPDX-License-Identifier: LGPL-2.1-or-later
// What the roles of one rank of a per-node multi-rank run share: the job, the run, the
// rank's share and what it took on, its traffic, whether the job stops, and the control
// messages it sends (runtime/mpi/core/owned_messages.h). The roles: the rank's own loop
// (owned_rank.h), the lender (owned_lender.h), the borrower (owned_borrower.h) and, on
// rank 0, the coordinator (owned_coordinator.h).
#pragma once

#include "config.h"  // HETPU_HAVE_MPI

#ifdef HETPU_HAVE_MPI

#include <hetpu/mpi.h>
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "runtime/divisible/block_run.h"
#include "runtime/mpi/mpi_rank_report.h"

namespace hetpu {

struct RankContext {
    RankContext(const hetpu_divisible_job &job_, const hetpu_divisible_placement &placement_, Run &run_, MPI_Comm comm_,
                Block share_)
        : job(job_), placement(placement_), run(run_), comm(comm_), share(share_), handed(share_.count)
    {
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
    }

    // Sends a control message; rank 0's messages to itself (coordinator and rank in one
    // loop) wait in to_self for the next round of receiving.
    template <typename T> void send(const T &msg, int to, int tag)
    {
        if (to == rank) {
            to_self.push_back({tag, std::string(reinterpret_cast<const char *>(&msg), sizeof msg)});
            return;
        }
        traffic.control_sent += sizeof msg;
        MPI_Send(&msg, sizeof msg, MPI_BYTE, to, tag, comm);
    }

    const char *label() const { return job.name ? job.name : "divisible job"; }

    const hetpu_divisible_job &job;
    const hetpu_divisible_placement &placement;
    Run &run;
    MPI_Comm comm;
    Block share;  // the rank's own share of the job
    int rank = 0, size = 1;
    uint64_t handed = 0;  // elements this rank took on: its share - lent + borrowed
    RankTraffic traffic;
    bool stopped = false;  // the coordinator said stop, with this status
    int stop_status = 0;
    std::vector<std::pair<int, std::string>> to_self;  // (tag, bytes)
};

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
