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

std::vector<Block> initial_shares(const BlockRules &rules, const std::vector<NodeState> &nodes)
{
    std::vector<Block> shares(nodes.size());
    bool rates = !nodes.empty();
    for (const NodeState &n : nodes)
        rates = rates && (n.pus == 0 || n.rate > 0);
    double sum = 0;
    for (const NodeState &n : nodes)
        sum += n.pus == 0 ? 0 : (rates ? n.rate : n.pus);
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
        acc += rates ? nodes[i].rate : nodes[i].pus;
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

std::vector<ShareMove> plan_moves(const std::vector<NodeState> &nodes, const NodeNetwork &network,
                                  const BlockRules &rules)
{
    // One move per call, between the node predicted to finish last and the one predicted
    // to finish first: the coordinator calls again at every report, so a run converges in
    // a few rounds, and one pair per call cannot ping-pong within a call.
    std::vector<ShareMove> moves;
    int slow = -1, fast = -1;
    double slow_t = 0, fast_t = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const NodeState &n = nodes[i];
        if (n.moving || n.failed || n.rate <= 0)
            continue;
        const double t = static_cast<double>(n.remaining + n.in_flight) / n.rate;
        if (n.remaining >= rules.min_block && (slow < 0 || t > slow_t)) {
            slow = static_cast<int>(i);
            slow_t = t;
        }
        if (fast < 0 || t < fast_t) {
            fast = static_cast<int>(i);
            fast_t = t;
        }
    }
    if (slow < 0 || fast < 0 || slow == fast)
        return moves;
    const NodeState &s = nodes[static_cast<size_t>(slow)], &f = nodes[static_cast<size_t>(fast)];
    const double per_element = network.bytes_per_element / network.bytes_per_s;
    // x moved: slow finishes at slow_t - x/s.rate, fast at fast_t + 2 latency + x (1/f.rate + per_element).
    const double x = (slow_t - fast_t - 2 * network.latency_s) / (1 / s.rate + 1 / f.rate + per_element);
    if (x < static_cast<double>(rules.min_block))
        return moves;
    uint64_t count = std::min<uint64_t>(static_cast<uint64_t>(x) / rules.granule * rules.granule, s.remaining);
    count = std::max(count, rules.min_block);
    const double after =
        std::max(slow_t - static_cast<double>(count) / s.rate,
                 fast_t + 2 * network.latency_s + static_cast<double>(count) * (1 / f.rate + per_element));
    // Only a clear gain (a tenth of the later finish): rates measured on a few blocks are
    // noisy, and every move costs two latencies and the data's time on both links.
    if (slow_t - after > std::max({0.1 * slow_t, 4 * network.latency_s, network.min_gain_s}))
        moves.push_back({slow, fast, count});
    return moves;
}

}  // namespace hetpu
