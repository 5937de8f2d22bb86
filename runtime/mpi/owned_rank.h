// SPDX-License-Identifier: LGPL-2.1-or-later
// One rank of a per-node multi-rank run, after its planner has started on its share: its
// main thread reports the rank's progress to the coordinator, receives the control
// messages and hands them to the rank's roles (lender, borrower and, on rank 0,
// coordinator) until the coordinator says stop and everything of this rank is settled.
#pragma once

#include "config.h"  // HETPU_HAVE_MPI

#ifdef HETPU_HAVE_MPI

#include <memory>
#include <vector>

#include "runtime/mpi/core/progress_reports.h"
#include "runtime/mpi/owned_borrower.h"
#include "runtime/mpi/owned_context.h"
#include "runtime/mpi/owned_coordinator.h"
#include "runtime/mpi/owned_lender.h"
#include "runtime/mpi/rank_watch.h"

namespace hetpu {

class PerNodeRank {
public:
    // `workers`: this rank's workers in the job.
    PerNodeRank(const hetpu_divisible_job &job, const hetpu_divisible_placement &placement, Run &run, MPI_Comm comm,
                Block share, std::vector<int> workers)
        : rank_(job, placement, run, comm, share), workers_(std::move(workers)), lender_(rank_), borrower_(rank_)
    {}

    // Rank 0 only, before loop(): every rank's figures, with its share as `remaining`.
    void make_coordinator(std::vector<NodeState> nodes, const NodeNetwork &network)
    {
        coordinator_ = std::make_unique<Coordinator>(rank_, std::move(nodes), network);
    }

    // The run's liveness watch, created by the runner (collective) before loop().
    void watch(RankWatch *watch) { watch_ = watch; }

    // Runs until the coordinator says stop and everything of this rank is settled.
    // Returns the job's status (the same on every rank).
    int loop();

    const RankTraffic &traffic() const { return rank_.traffic; }
    RankTraffic &traffic_counts() { return rank_.traffic; }  // the watch adds its heartbeats
    // Seconds from the start until this rank last ran out of work.
    double busy_s() const { return reports_.busy_s(); }
    unsigned moves() const { return coordinator_ ? coordinator_->moves() : 0; }
    double coordinator_s() const { return coordinator_ ? coordinator_->planning_s() : 0; }

private:
    bool receive_messages();
    void dispatch(int tag, int source, const char *bytes);
    void report(ReportEvent event, uint64_t move, uint64_t moved, bool force);
    bool settled_locally(uint64_t remaining, uint64_t in_flight);
    bool settled();
    void tick_watch();

    RankContext rank_;
    std::vector<int> workers_;
    double t0_us_ = 0;
    ProgressReports reports_{rank_.size};
    Lender lender_;
    Borrower borrower_;
    std::unique_ptr<Coordinator> coordinator_;
    RankWatch *watch_ = nullptr;
};

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
