// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/node_shares.h"

#include <algorithm>
#include <string>

namespace hetpu {

uint64_t work_left(uint64_t started, uint64_t done, double rate, double elapsed_s)
{
    double projected = rate * elapsed_s;
    projected = std::min(std::max(projected, static_cast<double>(done)), static_cast<double>(started));
    return started - static_cast<uint64_t>(projected);
}

namespace {

// What is known of a node's speed: its rate, else its nominal rate (0: nothing).
double known_speed(const NodeState &n) { return n.rate > 0 ? n.rate : n.nominal_rate; }

}  // namespace

std::vector<Block> initial_shares(const BlockRules &rules, const std::vector<NodeState> &nodes)
{
    std::vector<Block> shares(nodes.size());
    bool rates = !nodes.empty();
    for (const NodeState &n : nodes)
        rates = rates && (n.pus == 0 || known_speed(n) > 0);
    double sum = 0;
    for (const NodeState &n : nodes)
        sum += n.pus == 0 ? 0 : (rates ? known_speed(n) : n.pus);
    uint64_t next = 0;
    double acc = 0;
    int last = -1;
    for (size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].pus > 0)
            last = static_cast<int>(i);
    for (size_t i = 0; i < nodes.size() && sum > 0; ++i) {
        if (nodes[i].pus == 0) {
            shares[i] = {next, 0};
            continue;
        }
        acc += rates ? known_speed(nodes[i]) : nodes[i].pus;
        uint64_t end =
            static_cast<uint64_t>(static_cast<double>(rules.total) * acc / sum) / rules.granule * rules.granule;
        if (static_cast<int>(i) == last)
            end = rules.total;
        end = std::min(std::max(end, next), rules.total);
        if (end - next < rules.min_block && static_cast<int>(i) != last)
            end = next;
        shares[i] = {next, end - next};
        next = end;
    }
    return shares;
}

std::string held_shares_error(const BlockRules &rules, const std::vector<Block> &held)
{
    const auto range = [](uint64_t a, uint64_t b) { return "[" + std::to_string(a) + ", " + std::to_string(b) + ")"; };
    uint64_t next = 0;
    for (size_t r = 0; r < held.size(); ++r) {
        const Block &b = held[r];
        if (b.count == 0)
            continue;
        if (b.offset != next || b.count > rules.total - next)
            return "rank " + std::to_string(r) + " holds " + range(b.offset, b.offset + b.count) +
                   " where the shares of the ranks before it end at " + std::to_string(next) + " of " +
                   std::to_string(rules.total) + " elements";
        next += b.count;
    }
    if (next != rules.total)
        return "the ranks' shares end at " + std::to_string(next) + " of " + std::to_string(rules.total) + " elements";
    return "";
}

namespace {

struct Finish {
    double t;  // predicted finish, seconds from now
    int node;
};

struct PairCost {
    double latency_s;    // both nodes' latencies
    double per_element;  // seconds of the slower link per element
};

PairCost pair_cost(const NodeNetwork &network, int a, int b)
{
    const NodeLink x = network.link(a), y = network.link(b);
    return {x.latency_s + y.latency_s, network.bytes_per_element / std::min(x.bytes_per_s, y.bytes_per_s)};
}

uint64_t whole_granules(double x, const BlockRules &rules)
{
    return x <= 0 ? 0 : static_cast<uint64_t>(x) / rules.granule * rules.granule;
}


// Whether every node's work can be done by `t`: what the late nodes cannot finish themselves
// must fit in what the early ones have spare, and cross links: a node ships at most what
// its link sends by then (half an element's data each way: the inputs out), and takes at
// most what its own link brings in.
bool finish_feasible(double t, const std::vector<NodeState> &nodes, const NodeNetwork &network)
{
    double need = 0, spare = 0;
    for (const NodeState &n : nodes) {
        if (n.failed || n.rate <= 0)
            continue;
        const NodeLink own = network.link(n.rank);
        const double half = network.bytes_per_element / 2 / own.bytes_per_s;
        const double carried = half > 0 ? std::max(0.0, t - 2 * own.latency_s) / half : 1e300;
        const double left = static_cast<double>(n.remaining + n.in_flight);
        const double excess = left - n.rate * t;
        if (excess > 0) {
            if (n.pinned || n.moving || excess > std::min(carried, static_cast<double>(n.remaining)))
                return false;
            need += excess;
        } else if (!n.pinned && !n.moving) {
            spare += std::min(-excess, carried);
        }
    }
    return need <= spare;
}

// The earliest common finish the network allows: the work spread by the rates (where no
// link limits), up to the slowest node's own finish (where nothing can move).
double common_finish(const std::vector<NodeState> &nodes, const NodeNetwork &network)
{
    double work = 0, rate = 0, latest = 0;
    for (const NodeState &n : nodes) {
        if (n.failed || n.rate <= 0)
            continue;
        const double left = static_cast<double>(n.remaining + n.in_flight);
        work += left;
        rate += n.rate;
        latest = std::max(latest, left / n.rate);
    }
    double lo = rate > 0 ? work / rate : 0, hi = latest;
    if (finish_feasible(lo, nodes, network))
        return lo;
    for (int i = 0; i < 60 && hi - lo > 1e-6 * hi; ++i) {
        const double mid = (lo + hi) / 2;
        (finish_feasible(mid, nodes, network) ? hi : lo) = mid;
    }
    return hi;
}

// The most elements a receiver free at `from_t` can finish by `target` when their inputs
// reach it from `link_free` on at `half` seconds each and each then takes `each` seconds
// (its computation and its result's way back): from_t + n each while the inputs arrive
// before the receiver is free, else link_free + n (half + each).
double room_before(double target, double from_t, double link_free, double half, double each)
{
    const double while_busy = (target - from_t) / each;
    if (link_free + while_busy * half <= from_t)
        return while_busy;
    return (target - link_free) / (half + each);
}

}  // namespace

std::vector<ShareMove> plan_moves(const std::vector<NodeState> &nodes, const NodeNetwork &network,
                                  const BlockRules &rules)
{
    // Receivers a late finisher tries past those whose link makes no move pay.
    constexpr size_t kReceiversTried = 8;
    std::vector<Finish> order;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const NodeState &n = nodes[i];
        if (n.failed || n.rate <= 0)
            continue;
        if (!n.moving && !n.pinned)
            order.push_back({static_cast<double>(n.remaining + n.in_flight) / n.rate, static_cast<int>(i)});
    }
    std::vector<ShareMove> moves;
    if (order.size() < 2)
        return moves;
    std::sort(order.begin(), order.end(),
              [](const Finish &a, const Finish &b) { return a.t != b.t ? a.t < b.t : a.node < b.node; });
    // Late finishers give what lies beyond the common finish, early ones take up to it
    // (their links' time counted), several pairs at once.
    const double target = common_finish(nodes, network);
    std::vector<double> taken_until(nodes.size(), 0);  // a receiver's finish with what it took this call
    std::vector<double> sending_until(nodes.size(), 0);  // when a lender's link has sent what it gave
    for (const Finish &f : order)
        taken_until[static_cast<size_t>(f.node)] = f.t;
    size_t first_open = 0;  // the earliest finisher that may still take work
    for (size_t k = order.size(); k-- > 0;) {
        const Finish slow = order[k];
        const NodeState &s = nodes[static_cast<size_t>(slow.node)];
        if (slow.t <= target)
            break;
        uint64_t excess = std::min(whole_granules((slow.t - target) * s.rate, rules), s.remaining);
        std::vector<ShareMove> mine;
        std::vector<double> mine_from;  // each receiver's finish before it took its part
        double gave = 0;
        size_t tried = 0;
        for (size_t j = first_open; j < k && excess >= rules.min_block && tried < kReceiversTried; ++j) {
            const int to = order[j].node;
            const NodeState &f = nodes[static_cast<size_t>(to)];
            const double from_t = taken_until[static_cast<size_t>(to)];
            if (from_t >= target) {
                if (j == first_open)
                    ++first_open;
                continue;
            }
            // What the receiver can take before the target. The inputs cross while the
            // receiver still runs its own work (the range joins its work once they are in),
            // one move after another on the lender's link; the results come back after the
            // range ran. An element's data is taken as half inputs, half results (matmul's
            // columns of B and C; k-means' sums are smaller than its points).
            const PairCost c = pair_cost(network, slow.node, to);
            const double link_free = std::max(sending_until[static_cast<size_t>(slow.node)], 2 * c.latency_s);
            const double half = c.per_element / 2, each = 1 / f.rate + half;
            const uint64_t count =
                std::min(whole_granules(room_before(target, from_t, link_free, half, each), rules), excess);
            if (count < rules.min_block) {
                ++tried;
                continue;
            }
            mine.push_back({slow.node, to, count});
            mine_from.push_back(from_t);
            const double in = link_free + static_cast<double>(count) * half;
            taken_until[static_cast<size_t>(to)] = std::max(from_t, in) + static_cast<double>(count) * each;
            sending_until[static_cast<size_t>(slow.node)] = in;
            excess -= count;
            gave += static_cast<double>(count);
        }
        // Only a clear gain (a fifth of the late finish): rates measured on a few blocks are
        // noisy, and a move takes a tail the node's planner had sized its blocks for.
        const double after = slow.t - gave / s.rate;
        if (slow.t - after > std::max({0.2 * slow.t, network.min_gain_s}))
            moves.insert(moves.end(), mine.begin(), mine.end());
        else  // not made: the receivers' room stays (a lender gives only once per call)
            for (size_t j = 0; j < mine.size(); ++j)
                taken_until[static_cast<size_t>(mine[j].to)] = mine_from[j];
    }
    return moves;
}

}  // namespace hetpu
