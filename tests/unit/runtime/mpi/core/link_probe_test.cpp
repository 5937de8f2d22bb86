// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/link_probe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <utility>

namespace hetpu {
namespace {

// Every rank meets both ring neighbours exactly once, no rank is in two pairs of a round,
// and the probe never takes more than three rounds.
TEST(LinkProbeRounds, EveryRingEdgeOnceNoRankTwiceInARound)
{
    for (int ranks : {2, 3, 4, 5, 8, 9, 1024, 1023}) {
        const auto rounds = link_probe_rounds(ranks);
        EXPECT_LE(rounds.size(), ranks % 2 == 0 ? 2u : 3u) << ranks;
        std::set<std::pair<int, int>> seen;
        for (const auto &round : rounds) {
            std::set<int> busy;
            for (const LinkPair &p : round) {
                EXPECT_LT(p.first, p.second);
                EXPECT_TRUE(busy.insert(p.first).second) << "rank " << p.first << " twice in a round of " << ranks;
                EXPECT_TRUE(busy.insert(p.second).second) << "rank " << p.second << " twice in a round of " << ranks;
                EXPECT_TRUE(seen.insert({p.first, p.second}).second);
            }
        }
        const size_t edges = ranks == 2 ? 1 : static_cast<size_t>(ranks);
        EXPECT_EQ(seen.size(), edges) << ranks;
        for (int r = 0; r < ranks; ++r) {
            const int next = (r + 1) % ranks;
            EXPECT_TRUE(seen.count({std::min(r, next), std::max(r, next)})) << r << "-" << next << " of " << ranks;
        }
    }
    EXPECT_TRUE(link_probe_rounds(1).empty());
    EXPECT_TRUE(link_probe_rounds(0).empty());
}

TEST(PairLink, RateOfTheFastestMessageLessTheLatency)
{
    const double rate = 50e6 / 8, latency = 2e-3;
    const LinkSample fastest{1 << 20, 2 * latency + (1 << 20) / rate};
    const NodeLink link = pair_link({4.2e-3, 4.1e-3, 9e-3, 4.05e-3}, fastest);
    EXPECT_NEAR(link.latency_s, 2.025e-3, 1e-9);  // half the fastest round trip
    // The transfer less the measured round trip: within the 0.05 ms the pings overstate it.
    EXPECT_NEAR(link.bytes_per_s, rate, 0.002 * rate);
}

TEST(PairLink, LatencyAsLongAsTheTransferIsNotTakenOff)
{
    // A message of 4 MiB in 1 ms beside 0.4 ms round trips: the probe cannot separate them.
    const NodeLink link = pair_link({0.8e-3}, {4 << 20, 1.0e-3});
    EXPECT_NEAR(link.bytes_per_s, (4 << 20) / 1.0e-3, 1);
}

TEST(ProbeSizes, DoublingEndsOnceAMessageIsLongAndLargeEnough)
{
    const LinkProbeSizes sizes;
    EXPECT_FALSE(probe_doubling_ends(sizes, sizes.first_bytes, 0.001));
    // A busy host made a small message slow: keep doubling, the burst would dominate it.
    EXPECT_FALSE(probe_doubling_ends(sizes, sizes.first_bytes, sizes.enough_s));
    EXPECT_TRUE(probe_doubling_ends(sizes, sizes.min_bytes, sizes.enough_s));
    // A very slow link ends the doubling by time, however small the message.
    EXPECT_TRUE(probe_doubling_ends(sizes, sizes.first_bytes, sizes.longest_s));
    EXPECT_TRUE(probe_doubling_ends(sizes, sizes.max_bytes, 1e-6));
}

TEST(NodeLink, BestOfItsPairs)
{
    // A node on a slow link measures slow with both neighbours; a fast node beside it
    // measures fast with its other neighbour.
    const NodeLink slow = node_link_from_pairs({{4e-3, 6e6}, {5e-3, 6.2e6}});
    EXPECT_NEAR(slow.bytes_per_s, 6.2e6, 1);
    EXPECT_NEAR(slow.latency_s, 2e-3, 1e-12);
    const NodeLink fast = node_link_from_pairs({{4e-3, 6e6}, {1e-4, 120e6}});
    EXPECT_NEAR(fast.bytes_per_s, 120e6, 1);
    EXPECT_NEAR(fast.latency_s, 0.5e-4, 1e-12);
    const NodeLink none = node_link_from_pairs({});
    EXPECT_EQ(none.bytes_per_s, NodeLink{}.bytes_per_s);
}

}  // namespace
}  // namespace hetpu
