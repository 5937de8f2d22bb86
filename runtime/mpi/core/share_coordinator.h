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

    // Whether a round is due: a report came since the last one and the job is not ending.
    // Starts the round.
    bool start_round();
    // Whether the job ends now: a rank failed (at once; the ranks settle what is under way
    // first), or every rank is idle and no move is under way. Once true, no round is due.
    bool stop_now();
    // The moves worth making now, counted as made until the ranks report again.
    std::vector<MoveOrder> plan(const BlockRules &rules);

    int status() const { return status_; }     // 0, or the first error a rank reported
    unsigned moves() const { return moves_; }  // moves that handed something over
    const std::vector<NodeState> &nodes() const { return nodes_; }

private:
    std::vector<NodeState> nodes_;
    std::vector<bool> idle_;
    std::map<uint64_t, std::pair<int, int>> pending_;  // move -> (from, to)
    NodeNetwork network_;
    uint64_t next_move_ = 0;
    unsigned moves_ = 0;
    bool dirty_ = false;
    bool stopping_ = false;
    int status_ = 0;
};

}  // namespace hetpu
