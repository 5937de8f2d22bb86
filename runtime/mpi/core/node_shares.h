// SPDX-License-Identifier: LGPL-2.1-or-later
// The coordinator of a two-level multi-rank run (HETPU_MPI_PLANNER=per-node): it plans per
// node, never per processing unit. Each node (rank) is one aggregate unit: it owns a
// contiguous share of the job's elements, its own planner splits that share among its PUs,
// and the coordinator only decides (1) the initial shares and (2) re-sharing moves: the
// unstarted tail of a slow node's share handed, with its data, directly to a faster node.
// Pure C++ (no MPI, no StarPU): the real runner (runtime/mpi/mpi_owned_run.cpp) and the
// cluster simulator use the same decisions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/divisible/core/block_cursor.h"

namespace hetpu {

// What the coordinator knows of one node at one moment: node-level figures only.
struct NodeState {
    int rank = 0;
    unsigned pus = 0;        // processing units of the node (0: it cannot run the job)
    double rate = 0;         // elements per second the node has sustained so far (0: unknown yet)
    uint64_t remaining = 0;  // elements the node holds and has not yet handed to a PU
    uint64_t in_flight = 0;  // elements handed to its PUs and not finished
    bool moving = false;     // a move from or to it is under way: leave it alone this round
    bool failed = false;     // it stopped or reported an error: nothing is moved to it
};

// The network as the coordinator charges it: every node has its own link (latency and
// bandwidth), so a move costs time on the sending and on the receiving node's links.
struct NodeNetwork {
    double latency_s = 50e-6;
    double bytes_per_s = 10e9;
    double bytes_per_element = 0;  // the job's data per element (inputs out, results back)
    // No move that gains less: finishes predicted from reports a period apart differ by
    // about that much between identical nodes (the coordinator's report period).
    double min_gain_s = 0;
};

// One re-sharing decision: the last `count` unstarted elements of node `from` go to node
// `to` (count a multiple of the granule, at least min_block).
struct ShareMove {
    int from = -1;
    int to = -1;
    uint64_t count = 0;
};

// What a node reports as running (NodeState::in_flight): of the `started` elements handed
// to its PUs, those not yet done, projected at its rate rather than counted in finished
// blocks. Finished blocks alone make the figure jump by whole blocks (a planner's blocks
// are a tenth of a share), which would look like imbalance between identical nodes. The
// projection (rate x elapsed) is kept between the elements really done and all started.
uint64_t work_left(uint64_t started, uint64_t done, double rate, double elapsed_s);

// Initial contiguous shares, rank by rank in rank order: shares[i] belongs to nodes[i].
// In proportion to the nodes' rates where every node has one, else to their PU counts;
// granule multiples (the last share takes the remainder), no share below min_block unless
// it is 0; nodes with 0 PUs get 0. The shares cover [0, rules.total) exactly.
std::vector<Block> initial_shares(const BlockRules &rules, const std::vector<NodeState> &nodes);

// Shares the ranks already hold (hetpu_divisible_placement.held_offset/held_count), rank by
// rank: "" when they tile [0, rules.total) in rank order (empty shares allowed anywhere),
// else what is wrong, naming the first rank at fault, for the message every rank prints.
std::string held_shares_error(const BlockRules &rules, const std::vector<Block> &held);

// Re-sharing moves worth making now: a node predicted to finish (remaining + in_flight at
// its rate) well after another could absorb part of its unstarted tail, counting the
// move's network time on both links, hands that tail over. Only nodes with a known rate
// take part; one move per call, from the latest finisher to the earliest; a move is made
// only when it lowers the later of the two finishes by a tenth (no ping-pong of small
// ranges on noisy rates).
std::vector<ShareMove> plan_moves(const std::vector<NodeState> &nodes, const NodeNetwork &network,
                                  const BlockRules &rules);

}  // namespace hetpu
