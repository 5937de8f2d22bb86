// SPDX-License-Identifier: LGPL-2.1-or-later
// Measuring each node's link at the start of a multi-rank run, so that the coordinator
// prices a move by the links it really crosses (NodeNetwork::links) instead of a guess.
//
// Ranks meet their ring neighbours in pairs. A pair's timings give the slower of its two
// links (the data crosses both), so a node's own link is the best of its pairs: a node on a
// slow link measures slow with both neighbours, its neighbours measure fast with their
// other one. Pairs run in rounds where no rank is in two pairs, so every pair measures
// alone on its links, and the probe takes at most three rounds at any rank count. Pure C++.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/mpi/core/node_shares.h"

namespace hetpu {

// One pair of the probe: `first` sends, `second` answers.
struct LinkPair {
    int first = 0;
    int second = 0;
};

// The rounds of the probe for `ranks` ranks: every rank meets each ring neighbour once
// (one pair for 2 ranks, none for 1), no rank twice in a round, at most three rounds.
std::vector<std::vector<LinkPair>> link_probe_rounds(int ranks);

// One timed exchange: `bytes` sent one way, answered by one byte; `seconds` round trip.
struct LinkSample {
    double bytes = 0;
    double seconds = 0;
};

// How the sender grows its bulk messages: from `first_bytes`, doubling while a message
// takes less than `enough_s` or is smaller than `min_bytes` (and takes less than
// `longest_s`, and stays under `max_bytes`). Then `repeats` messages of twice the last
// size: the fastest gives the bandwidth. A busy host only ever adds time (the receiver is
// late to read the last bytes), so the fastest of a few is the link's; a large message
// makes a token bucket's burst and TCP's slow start small beside it.
struct LinkProbeSizes {
    uint64_t first_bytes = 64 << 10;
    uint64_t min_bytes = 512 << 10;
    uint64_t max_bytes = 4 << 20;
    double enough_s = 0.02;
    double longest_s = 0.1;
    int repeats = 3;
    int pings = 8;  // one-byte round trips for the latency (the fastest counts)
};

// Whether a message of `bytes` that took `seconds` ends the doubling.
bool probe_doubling_ends(const LinkProbeSizes &sizes, uint64_t bytes, double seconds);

// A pair's link from its one-byte round trips (latency: half the fastest) and the fastest
// of its final bulk messages (bandwidth: its bytes over its time less the round trip's
// latency). The latency is the pair's: both nodes' together.
NodeLink pair_link(const std::vector<double> &ping_rtts_s, const LinkSample &fastest);

// A node's own link from its pairs' links: the best bandwidth, and half the smallest pair
// latency (NodeNetwork charges a move both nodes' latencies). An empty list gives the
// default NodeLink.
NodeLink node_link_from_pairs(const std::vector<NodeLink> &pairs);

}  // namespace hetpu
