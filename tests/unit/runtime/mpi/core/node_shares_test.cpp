// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/node_shares.h"

#include <gtest/gtest.h>

using namespace hetpu;

namespace {

BlockRules rules_of(uint64_t total, uint64_t granule, uint64_t min_block)
{
    BlockRules r{total, granule, min_block};
    normalize_block_rules(r);
    return r;
}

NodeState node(int rank, unsigned pus, double rate = 0, uint64_t remaining = 0, uint64_t in_flight = 0)
{
    NodeState n;
    n.rank = rank;
    n.pus = pus;
    n.rate = rate;
    n.remaining = remaining;
    n.in_flight = in_flight;
    return n;
}

}  // namespace

TEST(NodeShares, PartitionTheJobByWorkersWhenSpeedsAreUnknown)
{
    const BlockRules r = rules_of(1000, 10, 10);
    std::vector<Block> s = initial_shares(r, {node(0, 1), node(1, 3), node(2, 0), node(3, 1)});
    ASSERT_EQ(s.size(), 4u);
    uint64_t end = 0;
    for (const Block &b : s) {
        EXPECT_EQ(b.offset, end) << "contiguous, rank by rank";
        end += b.count;
    }
    EXPECT_EQ(end, 1000u);
    EXPECT_EQ(s[2].count, 0u) << "a rank without workers holds nothing";
    EXPECT_EQ(s[0].count, 200u);
    EXPECT_EQ(s[1].count, 600u);
    EXPECT_EQ(s[0].count % 10, 0u);
}

TEST(NodeShares, FollowKnownSpeeds)
{
    const BlockRules r = rules_of(1200, 1, 1);
    std::vector<Block> s = initial_shares(r, {node(0, 1, 100), node(1, 1, 500)});
    EXPECT_EQ(s[0].count, 200u);
    EXPECT_EQ(s[1].count, 1000u);
    // One speed unknown: back to worker counts for everyone.
    s = initial_shares(r, {node(0, 1, 100), node(1, 1, 0)});
    EXPECT_EQ(s[0].count, 600u);
}

TEST(NodeShares, MoveTheSlowNodesTailToTheFastOne)
{
    const BlockRules r = rules_of(10000, 1, 10);
    NodeNetwork net;
    net.bytes_per_element = 0;
    // Node 1 is idle; node 0 would need 40 s for what it holds.
    std::vector<NodeState> nodes = {node(0, 1, 100, 3900, 100), node(1, 1, 900, 0, 0)};
    std::vector<ShareMove> moves = plan_moves(nodes, net, r);
    ASSERT_EQ(moves.size(), 1u);
    EXPECT_EQ(moves[0].from, 0);
    EXPECT_EQ(moves[0].to, 1);
    // Equal finishes: (4000 - x) / 100 = x / 900  ->  x = 3600.
    EXPECT_NEAR(static_cast<double>(moves[0].count), 3600, 10);

    // Applied, the same rates give no further move (no ping-pong).
    nodes[0].remaining -= moves[0].count;
    nodes[1].remaining += moves[0].count;
    EXPECT_TRUE(plan_moves(nodes, net, r).empty());
}

TEST(NodeShares, ANetworkSlowerThanTheGainKeepsTheWork)
{
    const BlockRules r = rules_of(10000, 1, 10);
    std::vector<NodeState> nodes = {node(0, 1, 100, 1900, 100), node(1, 1, 900, 0, 0)};
    NodeNetwork fast_net;
    EXPECT_EQ(plan_moves(nodes, fast_net, r).size(), 1u);
    NodeNetwork slow_net;
    slow_net.bytes_per_element = 1e6;  // 1 MB an element over 10 GB/s: 0.1 ms, slower than computing it
    slow_net.bytes_per_s = 1e6;        // ... now 1 s an element: far slower
    EXPECT_TRUE(plan_moves(nodes, slow_net, r).empty());
}

TEST(NodeShares, NothingMovesToAFailedOrBusyNodeOrFromAnUnmeasuredOne)
{
    const BlockRules r = rules_of(10000, 1, 10);
    NodeNetwork net;
    std::vector<NodeState> nodes = {node(0, 1, 100, 3900, 100), node(1, 1, 900, 0, 0)};
    nodes[1].failed = true;
    EXPECT_TRUE(plan_moves(nodes, net, r).empty());
    nodes[1].failed = false;
    nodes[1].moving = true;
    EXPECT_TRUE(plan_moves(nodes, net, r).empty());
    nodes[1].moving = false;
    nodes[0].rate = 0;
    EXPECT_TRUE(plan_moves(nodes, net, r).empty());
}

TEST(NodeShares, BalancedNodesStayPut)
{
    const BlockRules r = rules_of(10000, 1, 10);
    NodeNetwork net;
    std::vector<NodeState> nodes = {node(0, 1, 100, 1000, 0), node(1, 1, 102, 1000, 0), node(2, 1, 98, 1000, 0)};
    EXPECT_TRUE(plan_moves(nodes, net, r).empty()) << "a 2% spread is noise, not worth a move";
}

TEST(NodeShares, NoMoveGainsLessThanTheReportsCanTell)
{
    const BlockRules r = rules_of(10000, 1, 10);
    // 1.7 s against 1.0 s: the move would gain 0.35 s (20%), less than the reports can tell.
    std::vector<NodeState> nodes = {node(0, 1, 100, 150, 20), node(1, 1, 100, 80, 20)};
    NodeNetwork net;
    net.min_gain_s = 0.5;
    EXPECT_TRUE(plan_moves(nodes, net, r).empty());
    net.min_gain_s = 0;
    EXPECT_EQ(plan_moves(nodes, net, r).size(), 1u);
}

TEST(NodeShares, WorkLeftIsProjectedAtTheNodesRate)
{
    // 1,000 started, 200 in finished blocks, 50 per second for 10 s: 500 projected done.
    EXPECT_EQ(work_left(1000, 200, 50, 10), 500u);
    EXPECT_EQ(work_left(1000, 800, 50, 10), 200u) << "never less done than finished blocks";
    EXPECT_EQ(work_left(1000, 200, 500, 10), 0u) << "never more done than started";
}

TEST(NodeShares, HeldSharesMustTileTheJobInRankOrder)
{
    BlockRules rules{1000, 10, 10, "held"};
    EXPECT_EQ(held_shares_error(rules, {{0, 300}, {300, 0}, {300, 700}}), "");
    EXPECT_EQ(held_shares_error(rules, {{0, 1000}}), "");
    // A gap, an overlap, ranks out of order, and a job not covered: each names what is wrong.
    EXPECT_NE(held_shares_error(rules, {{0, 300}, {310, 690}}).find("rank 1 holds [310, 1000)"), std::string::npos);
    EXPECT_NE(held_shares_error(rules, {{0, 300}, {200, 800}}).find("rank 1"), std::string::npos);
    EXPECT_NE(held_shares_error(rules, {{300, 700}, {0, 300}}).find("rank 0"), std::string::npos);
    EXPECT_NE(held_shares_error(rules, {{0, 300}, {300, 600}}).find("end at 900 of 1000"), std::string::npos);
    EXPECT_NE(held_shares_error(rules, {{0, 300}, {300, 900}}).find("rank 1"), std::string::npos);
}

TEST(NodeShares, FirstSharesFollowTheUnitsKindsBeforeAnyRun)
{
    const BlockRules r = rules_of(1200, 1, 1);
    // Same PU counts, but node 1's units are GPUs: 5x the nominal rate.
    std::vector<NodeState> nodes = {node(0, 4), node(1, 4)};
    nodes[0].nominal_rate = 100;
    nodes[1].nominal_rate = 500;
    std::vector<Block> s = initial_shares(r, nodes);
    EXPECT_EQ(s[0].count, 200u);
    EXPECT_EQ(s[1].count, 1000u);
    // A rate a previous run measured stands over the nominal one.
    nodes[1].rate = 100;
    s = initial_shares(r, nodes);
    EXPECT_EQ(s[0].count, 600u);
    // Nothing known of one node: PU counts for everyone.
    nodes[1].rate = nodes[1].nominal_rate = 0;
    s = initial_shares(r, {node(0, 1), node(1, 3)});
    EXPECT_EQ(s[0].count, 300u);
}

TEST(NodeShares, AMoveIsPricedByTheSlowerOfTheTwoLinks)
{
    const BlockRules r = rules_of(100000, 1, 10);
    NodeNetwork net;
    net.bytes_per_element = 64e3;
    net.links = {{5e-6, 12.5e9}, {5e-6, 12.5e9}, {5e-3, 12.5e6}};
    // Node 0 would need 40 s; nodes 1 and 2 are idle, node 2 three times faster but behind a
    // 12.5 MB/s link where an element's data take 5 ms (it computes one in 1.1 ms).
    std::vector<NodeState> nodes = {node(0, 1, 100, 3900, 100), node(1, 1, 300, 0, 0), node(2, 1, 900, 0, 0)};
    std::vector<ShareMove> moves = plan_moves(nodes, net, r);
    ASSERT_EQ(moves.size(), 1u) << "nothing over the slow link";
    EXPECT_EQ(moves[0].to, 1);
    // Common finish over nodes 0 and 1: 4000 / 400 = 10 s; node 1 takes 10 s of its work.
    EXPECT_NEAR(static_cast<double>(moves[0].count), 3000, 10);
    // The same link a hundred times faster: node 2 shares the work too.
    net.links[2] = {5e-6, 1.25e9};
    moves = plan_moves(nodes, net, r);
    uint64_t to_two = 0;
    for (const ShareMove &m : moves)
        to_two += m.to == 2 ? m.count : 0;
    EXPECT_GT(to_two, 2000u);
    // Pricing is by the pair: a slow link of the lender holds every move back.
    net.links = {{5e-3, 1.25e4}, {5e-6, 12.5e9}, {5e-6, 12.5e9}};
    EXPECT_TRUE(plan_moves(nodes, net, r).empty());
}

TEST(NodeShares, SeveralTailsMoveAtOnceWhenTheImbalanceIsLarge)
{
    const BlockRules r = rules_of(100000, 1, 10);
    NodeNetwork net;
    // Two slow nodes with most of their work left, two fast ones idle.
    std::vector<NodeState> nodes = {node(0, 1, 100, 3900, 100), node(1, 1, 900, 0, 0), node(2, 1, 100, 2900, 100),
                                    node(3, 1, 900, 0, 0)};
    const std::vector<ShareMove> moves = plan_moves(nodes, net, r);
    ASSERT_GE(moves.size(), 2u);
    std::vector<uint64_t> gave(4, 0), took(4, 0);
    for (const ShareMove &m : moves) {
        gave[static_cast<size_t>(m.from)] += m.count;
        took[static_cast<size_t>(m.to)] += m.count;
    }
    // Common finish: 7,000 elements over 2,000 per second, 3.5 s; each slow node keeps 350.
    EXPECT_NEAR(static_cast<double>(gave[0]), 3650, 20);
    EXPECT_NEAR(static_cast<double>(gave[2]), 2650, 20);
    EXPECT_NEAR(static_cast<double>(took[1]), 3150, 20) << "each fast node takes its 3.5 s";
    EXPECT_NEAR(static_cast<double>(took[3]), 3150, 20);
}

TEST(NodeShares, APinnedNodeTakesPartInNoMove)
{
    const BlockRules r = rules_of(10000, 1, 10);
    NodeNetwork net;
    std::vector<NodeState> nodes = {node(0, 1, 100, 3900, 100), node(1, 1, 900, 0, 0)};
    nodes[1].pinned = true;
    EXPECT_TRUE(plan_moves(nodes, net, r).empty());
    nodes[1].pinned = false;
    nodes[0].pinned = true;
    EXPECT_TRUE(plan_moves(nodes, net, r).empty());
}
