// SPDX-License-Identifier: LGPL-2.1-or-later
// The coordinator role of a per-node multi-rank run (rank 0's main thread, beside its own
// share): it hears every rank's reports, orders re-sharing moves from lender to borrower,
// and stops every rank when the job ends. Every decision is the pure core's
// (runtime/mpi/core/share_coordinator.h); this glue sends the orders.
#pragma once

#include "config.h"  // HETPU_HAVE_MPI

#ifdef HETPU_HAVE_MPI

#include <vector>

#include "runtime/mpi/core/share_coordinator.h"
#include "runtime/mpi/owned_context.h"

namespace hetpu {

class Coordinator {
public:
    Coordinator(RankContext &rank, std::vector<NodeState> nodes, const NodeNetwork &network)
        : rank_(rank), core_(std::move(nodes), network)
    {}

    void heard(const WireReport &r) { core_.heard(r); }
    // One round after new reports: stop orders to every rank, or the moves worth making.
    // Whether it sent anything.
    bool coordinate();

    unsigned moves() const { return core_.moves(); }
    double planning_s() const { return planning_s_; }  // seconds spent planning moves

private:
    RankContext &rank_;
    ShareCoordinator core_;
    double planning_s_ = 0;
};

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
