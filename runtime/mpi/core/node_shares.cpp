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

}  // namespace

std::vector<ShareMove> plan_moves(const std::vector<NodeState> &nodes, const NodeNetwork &network,
                                  const BlockRules &rules)
{
    // Receivers a late finisher tries past those whose link makes no move pay.
    constexpr size_t kReceiversTried = 8;
    std::vector<Finish> order;
    // The common finish if the work were spread by the rates, over the nodes that can share
    // it: live, with a rate, and a link that carries an element's data no slower than the
    // node computes it (a node behind a slow link keeps its own work and takes little).
    double work = 0, rate = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const NodeState &n = nodes[i];
        if (n.failed || n.rate <= 0)
            continue;
        const NodeLink own = network.link(n.rank);
        const bool reachable = network.bytes_per_element / own.bytes_per_s <= 1 / n.rate;
        const double left = static_cast<double>(n.remaining + n.in_flight);
        if ((reachable && !n.pinned) || n.moving) {
            work += left;
            rate += n.rate;
        }
        if (!n.moving && !n.pinned)
            order.push_back({left / n.rate, static_cast<int>(i)});
    }
    std::vector<ShareMove> moves;
    if (order.size() < 2)
        return moves;
    std::sort(order.begin(), order.end(),
              [](const Finish &a, const Finish &b) { return a.t != b.t ? a.t < b.t : a.node < b.node; });
    // Late finishers give what lies beyond the common finish, early ones take up to it
    // (their links' time counted), several pairs at once.
    if (rate <= 0)
        return moves;
    const double target = work / rate;
    std::vector<double> taken_until(nodes.size(), 0);  // a receiver's finish with what it took this call
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
            // What the receiver can take, its link's time included, before the target; nothing
            // over a link that carries an element's data slower than the receiver computes it
            // (the results' way back is not in its reports: such moves end the job late).
            const PairCost c = pair_cost(network, slow.node, to);
            if (c.per_element > 1 / f.rate) {
                ++tried;
                continue;
            }
            const uint64_t room =
                whole_granules((target - from_t - 2 * c.latency_s) / (1 / f.rate + c.per_element), rules);
            const uint64_t count = std::min(room, excess);
            if (count < rules.min_block) {
                ++tried;
                continue;
            }
            mine.push_back({slow.node, to, count});
            taken_until[static_cast<size_t>(to)] =
                from_t + 2 * c.latency_s + static_cast<double>(count) * (1 / f.rate + c.per_element);
            excess -= count;
            gave += static_cast<double>(count);
        }
        // Only a clear gain (a fifth of the late finish): rates measured on a few blocks are
        // noisy, and a move takes a tail the node's planner had sized its blocks for.
        const double after = slow.t - gave / s.rate;
        if (slow.t - after > std::max({0.2 * slow.t, network.min_gain_s}))
            moves.insert(moves.end(), mine.begin(), mine.end());
        else
            for (const ShareMove &m : mine)  // not made: the receivers' room stays
                taken_until[static_cast<size_t>(m.to)] -=
                    static_cast<double>(m.count) *
                        (1 / nodes[static_cast<size_t>(m.to)].rate + pair_cost(network, m.from, m.to).per_element) +
                    2 * pair_cost(network, m.from, m.to).latency_s;
    }
    return moves;
}

}  // namespace hetpu
