// SPDX-License-Identifier: LGPL-2.1-or-later
// The parts of the cluster simulation (cluster_sim.h) apart from its event loop: the
// network links, the events, a dispatcher's domain, the nominal bound and how a failed
// node's work is cut among the live nodes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "runtime/divisible/core/block_dispatcher.h"
#include "runtime/mpi/core/owned_messages.h"
#include "tools/sim/cluster_scenario.h"
#include "tools/sim/simulated_unit.h"

namespace hetpu::sim::cluster_parts {

// The time these units need to finish `workload` together (noise-free, at the slowdown in
// force from the start): bisection on the common end time.
double nominal_bound(const std::vector<SimulatedUnit> &units, uint64_t workload);

// Elements per second these units sustain together on blocks of `block` elements, from
// their calibrated profiles alone (no slowdown, no noise): what is known of a node before
// it runs.
double nominal_rate(const std::vector<SimulatedUnit> &units, uint64_t block);

// Modelled seconds of one planner call (a block's end, a range added) for a domain of `pus`
// units: a fixed part and a part per unit (the planner's refit over its units).
double planner_call_s(size_t pus);

// A failed node's lost ranges, in order, cut in proportion to the live nodes' rates
// (`rates[i]` is live node `live[i]`'s; a rate under 1e-9 counts as 1e-9), in whole granules
// and never leaving a piece under the minimum block: (live node, range) pieces.
std::vector<std::pair<int, Block>> share_lost(const std::vector<Block> &lost, const std::vector<int> &live,
                                              const std::vector<double> &rates, const BlockRules &rules);

struct FifoLink {
    Link spec;
    double free = 0;
};

// Data of `bytes` over link a and then b (FIFO both, the slower one's bandwidth), from t:
// when it arrives.
inline double send(double t, double bytes, FifoLink &a, FifoLink *b)
{
    double bw = a.spec.bytes_per_s, start = std::max(t, a.free), latency = a.spec.latency_s;
    if (b) {
        bw = std::min(bw, b->spec.bytes_per_s);
        start = std::max(start, b->free);
        latency += b->spec.latency_s;
    }
    const double end = start + bytes / bw;
    a.free = end;
    if (b)
        b->free = end;
    return end + latency;
}

enum class Kind { BlockEnd, Complete, Report, Decide, Give, Take, Returned, Fail, Detect, Reread };

struct Event {
    double at;
    uint64_t seq;
    Kind kind;
    int domain = -1;  // the dispatcher (0 under central; the node under per-node)
    int unit = -1;    // local unit of the domain
    Assignment block;
    BlockDone done;
    uint64_t move = 0;
    Block range;
    WireReport report{};  // Decide: the report that reaches rank 0
    bool operator>(const Event &o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

struct Queued {
    Assignment block;
    double handed;
    double ready;  // its inputs are where it runs (< 0: not sent yet, a pool block)
};

// A dispatcher and its planner over some units: all PUs (central) or one node's.
struct Domain {
    int node = -1;         // per-node: the node; central: -1
    std::vector<int> pus;  // local unit -> global PU
    std::unique_ptr<BlockPlanner> planner;
    std::unique_ptr<BlockDispatcher> dispatcher;
    std::vector<std::deque<Queued>> queues;
    std::deque<Queued> pool;
    std::vector<bool> busy;
    double planner_free = 0;
    // Per-node bookkeeping.
    bool failed = false;
    bool reporting = false;  // a periodic report is scheduled
    uint64_t done = 0, handed = 0;
    std::vector<Block> owned;  // its share and what it took over from failed nodes
    struct Borrowed {
        int from;
        Block range;
        uint64_t home = 0;
    };
    std::map<uint64_t, Borrowed> borrowed;
    unsigned incoming = 0;          // moves and re-reads on their way here
    std::vector<double> unit_rate;  // per local unit: elements per second of its last block
    // The node's speed: its units' on their last blocks, once every unit has run one (a
    // partial sum would make a node look slower than it is); 0 until then.
    double rate() const
    {
        double r = 0;
        for (double u : unit_rate) {
            if (u <= 0)
                return 0;
            r += u;
        }
        return r;
    }
};

}  // namespace hetpu::sim::cluster_parts
