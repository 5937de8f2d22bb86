// SPDX-License-Identifier: LGPL-2.1-or-later
// The coordinator's decisions in a per-node multi-rank run (rank 0, beside its own share):
// what each rank's report says about it, when the job ends, and which re-sharing moves to
// order (runtime/mpi/core/node_shares.h decides the moves). Pure C++: the MPI glue
// (runtime/mpi/owned_coordinator.cpp) only carries the messages.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "runtime/mpi/core/node_shares.h"
#include "runtime/mpi/core/owned_messages.h"

namespace hetpu {

// One re-sharing move ordered: its id names it in the ranks' messages and data tags.
struct MoveOrder {
    uint64_t id = 0;
    ShareMove move;
};

class ShareCoordinator {
public:
    // `nodes`: every rank's figures, with its initial share as `remaining`.
    ShareCoordinator(std::vector<NodeState> nodes, const NodeNetwork &network);

    // A rank's report: its figures, its error, and the end of a move it took part in.
    void heard(const WireReport &r);

    // Whether a round is due `elapsed_s` into the job: a report came since the last round,
    // the job is not ending, and the last round is a round interval old or a rank has run
    // dry since (coordinator_cadence.h). Starts the round.
    bool start_round(double elapsed_s);
    // Whether the job ends now: a rank failed (at once; the ranks settle what is under way
    // first), or every rank is idle and no move is under way. Once true, no round is due.
    bool stop_now();
    // The moves worth making now, counted as made until the ranks report again.
    std::vector<MoveOrder> plan(const BlockRules &rules);
    // A rank is gone (it failed and its work is shared out elsewhere): it takes part in no
    // further move, and the moves it was a party of are settled.
    void lost(int rank);

    int status() const { return status_; }     // 0, or the first error a rank reported
    unsigned moves() const { return moves_; }  // moves that handed something over
    const std::vector<NodeState> &nodes() const { return nodes_; }

private:
    std::vector<NodeState> nodes_;
    std::vector<bool> idle_;
    struct Pending {
        int from, to;
        uint64_t count;
        bool gave = false;  // the lender handed it over; the borrower has not reported it arrived
    };
    // Whether the rank still takes part in a move under way (a node may be in several).
    void refresh_moving(int rank);

    std::map<uint64_t, Pending> pending_;
    NodeNetwork network_;
    uint64_t next_move_ = 0;
    unsigned moves_ = 0;
    bool dirty_ = false;
    bool urgent_ = false;  // a rank ran dry since the last round
    double last_round_s_ = -1e300;
    bool stopping_ = false;
    int status_ = 0;
};

}  // namespace hetpu
