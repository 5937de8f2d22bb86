// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/link_probe.h"

#include <algorithm>

namespace hetpu {

std::vector<std::vector<LinkPair>> link_probe_rounds(int ranks)
{
    std::vector<std::vector<LinkPair>> rounds;
    if (ranks < 2)
        return rounds;
    // The ring's edges (one edge for two ranks), each in the first round where neither
    // end is busy: a ring of even length takes two rounds, an odd one three.
    const int edges = ranks == 2 ? 1 : ranks;
    std::vector<std::vector<bool>> busy;
    for (int e = 0; e < edges; ++e) {
        const int a = e, b = (e + 1) % ranks;
        size_t r = 0;
        while (r < rounds.size() && (busy[r][static_cast<size_t>(a)] || busy[r][static_cast<size_t>(b)]))
            ++r;
        if (r == rounds.size()) {
            rounds.emplace_back();
            busy.emplace_back(static_cast<size_t>(ranks), false);
        }
        rounds[r].push_back({std::min(a, b), std::max(a, b)});
        busy[r][static_cast<size_t>(a)] = busy[r][static_cast<size_t>(b)] = true;
    }
    return rounds;
}

bool probe_doubling_ends(const LinkProbeSizes &sizes, uint64_t bytes, double seconds)
{
    return (seconds >= sizes.enough_s && bytes >= sizes.min_bytes) || seconds >= sizes.longest_s ||
           bytes >= sizes.max_bytes;
}

NodeLink pair_link(const std::vector<double> &ping_rtts_s, const LinkSample &fastest)
{
    NodeLink link;
    if (!ping_rtts_s.empty())
        link.latency_s = std::max(*std::min_element(ping_rtts_s.begin(), ping_rtts_s.end()) / 2, 0.0);
    // The round trip's latency comes off only while it is clearly smaller than the
    // transfer: on a link this fast the probe cannot tell them apart, and the mean rate is
    // what it saw.
    double transfer_s = fastest.seconds;
    if (2 * link.latency_s < 0.5 * transfer_s)
        transfer_s -= 2 * link.latency_s;
    if (fastest.bytes > 0 && transfer_s > 0)
        link.bytes_per_s = fastest.bytes / transfer_s;
    return link;
}

NodeLink node_link_from_pairs(const std::vector<NodeLink> &pairs)
{
    if (pairs.empty())
        return NodeLink{};
    NodeLink best = pairs.front();
    for (const NodeLink &p : pairs) {
        best.bytes_per_s = std::max(best.bytes_per_s, p.bytes_per_s);
        best.latency_s = std::min(best.latency_s, p.latency_s);
    }
    best.latency_s /= 2;
    return best;
}

}  // namespace hetpu
