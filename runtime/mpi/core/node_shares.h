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
    unsigned pus = 0;  // processing units of the node (0: it cannot run the job)
    double rate = 0;   // elements per second the node has sustained so far (0: unknown yet)
    // Elements per second expected from the node's units and their kinds (calibrations, a
    // GPU's rate is not a CPU's), before it ran anything: only the first shares use it.
    double nominal_rate = 0;
    uint64_t remaining = 0;  // elements the node holds and has not yet handed to a PU
    uint64_t in_flight = 0;  // elements handed to its PUs and not finished
    bool moving = false;     // a move from or to it is under way: leave it alone this round
    bool failed = false;     // it stopped or reported an error: nothing is moved to it
    bool pinned = false;     // it takes part in no move (the user kept it out)
};

// One node's link as measured (or configured): latency and bandwidth.
struct NodeLink {
    double latency_s = 50e-6;
    double bytes_per_s = 10e9;
};

// The network as the coordinator charges it: every node has its own link, so a move costs
// both nodes' latencies and its data at the slower of the two links' bandwidths.
struct NodeNetwork {
    double latency_s = 50e-6;  // a node without its own entry in `links` has this link
    double bytes_per_s = 10e9;
    std::vector<NodeLink> links;   // per rank, where known
    double bytes_per_element = 0;  // the job's data per element (inputs out, results back)
    // No move that gains less: finishes predicted from reports a period apart differ by
    // about that much between identical nodes (the coordinator's report period).
    double min_gain_s = 0;

    NodeLink link(int rank) const
    {
        return rank >= 0 && static_cast<size_t>(rank) < links.size() ? links[static_cast<size_t>(rank)]
                                                                     : NodeLink{latency_s, bytes_per_s};
    }
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
// In proportion to what is known of each node's speed: its rate (a previous run's), else
// its nominal rate (its units and their kinds); where some node has neither, to the PU counts;
// granule multiples (the last share takes the remainder), no share below min_block unless
// it is 0; nodes with 0 PUs get 0. The shares cover [0, rules.total) exactly.
std::vector<Block> initial_shares(const BlockRules &rules, const std::vector<NodeState> &nodes);

// Shares the ranks already hold (hetpu_divisible_placement.held_offset/held_count), rank by
// rank: "" when they tile [0, rules.total) in rank order (empty shares allowed anywhere),
// else what is wrong, naming the first rank at fault, for the message every rank prints.
std::string held_shares_error(const BlockRules &rules, const std::vector<Block> &held);

// Re-sharing moves worth making now. Each node is predicted to finish (remaining +
// in_flight) at its rate; the common finish is the work over the rates of the nodes that
// can share it (a node whose link carries an element's data slower than it computes one
// keeps its work out of it). Late finishers, latest first, give what lies beyond the
// common finish to the earliest finishers, each taking what fits before the common finish
// with the move's network time counted (both latencies, the data at the slower link's
// bandwidth): a large imbalance is settled by several moves at once, a slow node's excess
// spread over several nodes. No move crosses a link that carries an element's data slower
// than the receiver computes it. Only nodes with a known rate, not pinned and not in a move
// under way, take part; a node gives only when that lowers its finish by a fifth (no
// ping-pong of small ranges on noisy rates) and by min_gain_s: over a link too slow, nothing
// moves.
std::vector<ShareMove> plan_moves(const std::vector<NodeState> &nodes, const NodeNetwork &network,
                                  const BlockRules &rules);

}  // namespace hetpu
