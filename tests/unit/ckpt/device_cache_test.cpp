// SPDX-License-Identifier: LGPL-2.1-or-later
// The device cache bookkeeping (chunks grown one at a time, slots) and the placement of a
// group checkpoint across devices by the peer schedule.
#include "ckpt_backend/core/device_cache.h"
#include "ckpt_backend/core/group_placement.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <stdexcept>

using namespace hetpu::ckpt;

TEST(DeviceCache, GrowsChunkByChunkAndIsUsableAfterTheFirst)
{
    DeviceCache c(4 << 20, 1 << 20, 256 << 10);  // 4 chunks of 4 slots
    EXPECT_EQ(c.chunks_wanted(), 4u);
    EXPECT_EQ(c.free_slots(), 0u);
    EXPECT_THROW(c.take(), std::length_error);
    EXPECT_EQ(c.add_chunk(), 0u);
    EXPECT_EQ(c.free_slots(), 4u);
    EXPECT_EQ(c.chunks_wanted(), 3u);
    const SlotRef s = c.take();
    EXPECT_EQ(s.chunk, 0u);
    EXPECT_EQ(s.slot, 0u);
    EXPECT_EQ(c.offset_of(c.take()), 256u << 10);
    c.add_chunk();
    c.stop_growing();  // the device refused the third chunk
    EXPECT_EQ(c.chunks_wanted(), 0u);
    EXPECT_THROW(c.add_chunk(), std::logic_error);
    EXPECT_EQ(c.total_slots(), 8u);
    EXPECT_EQ(c.free_slots(), 6u);
}

TEST(DeviceCache, SmallTargetsAndBadSizes)
{
    DeviceCache small(600 << 10, 16 << 20, 256 << 10);  // below one chunk: one chunk of 2 slots
    EXPECT_EQ(small.chunks_wanted(), 1u);
    small.add_chunk();
    EXPECT_EQ(small.total_slots(), 2u);
    EXPECT_EQ(small.chunk_bytes(), 512u << 10);
    DeviceCache none(100, 1 << 20, 4096);
    EXPECT_EQ(none.chunks_wanted(), 0u);
    EXPECT_THROW(DeviceCache(1 << 20, 1000, 4096), std::invalid_argument);
    EXPECT_THROW(DeviceCache(1 << 20, 4096, 0), std::invalid_argument);
    EXPECT_EQ(small.slots_for(1), 1u);
    EXPECT_EQ(small.slots_for(256 << 10), 1u);
    EXPECT_EQ(small.slots_for((256 << 10) + 1), 2u);
}

// Random take/give_back against a model: a slot is never handed out twice, never lost, and
// double frees are refused.
TEST(DeviceCache, RandomOperationsMatchAModel)
{
    std::mt19937 rng(45);
    DeviceCache c(8 * 4096 * 4, 4096 * 4, 4096);
    std::set<std::pair<std::size_t, std::size_t>> taken;
    std::vector<SlotRef> held;
    for (int op = 0; op < 4000; ++op) {
        const int what = static_cast<int>(rng() % 10);
        if (what == 0 && c.chunks_wanted() > 0) {
            c.add_chunk();
        } else if (what < 6 && c.free_slots() > 0) {
            const SlotRef s = c.take();
            ASSERT_TRUE(taken.insert({s.chunk, s.slot}).second) << "slot handed out twice";
            held.push_back(s);
        } else if (!held.empty()) {
            const std::size_t k = rng() % held.size();
            c.give_back(held[k]);
            EXPECT_THROW(c.give_back(held[k]), std::invalid_argument);
            taken.erase({held[k].chunk, held[k].slot});
            held.erase(held.begin() + static_cast<long>(k));
        }
        ASSERT_EQ(c.free_slots() + taken.size(), c.total_slots());
    }
}

namespace {

// Two devices: device 0 holds 6 slots of checkpoint data with 2 free slots, device 1 holds
// 1 slot with 6 free. Link 0->1 is 4x faster than 0->host.
struct TwoDevices {
    std::uint64_t slot = 1000;
    std::vector<GroupRegion> regions{{0, 3500}, {1, 1000}, {0, 2500}};
    std::vector<std::size_t> free{2, 6};
    std::vector<std::vector<double>> link{{0, 4e9}, {4e9, 0}};
    std::vector<double> host{1e9, 1e9};
};

// Every byte of every region exactly once, a device never receives more pieces than it
// had free slots, and pieces per link equal the schedule's transfers.
void expect_consistent(const TwoDevices &t, const GroupPlacement &g)
{
    std::map<std::size_t, std::uint64_t> bytes;
    std::map<int, std::size_t> received;
    std::map<std::pair<int, int>, std::uint64_t> per_link;
    for (const Piece &p : g.pieces) {
        bytes[p.region] += p.bytes;
        EXPECT_LE(p.bytes, t.slot);
        EXPECT_EQ(p.region_offset % t.slot, 0u);
        if (p.to != kHost)
            ++received[p.to];
        const int from = static_cast<int>(t.regions[p.region].device);
        if (p.to != from)
            ++per_link[{from, p.to}];
    }
    for (std::size_t r = 0; r < t.regions.size(); ++r)
        EXPECT_EQ(bytes[r], t.regions[r].size) << "region " << r;
    for (std::size_t d = 0; d < t.free.size(); ++d)
        EXPECT_LE(received[static_cast<int>(d)], t.free[d]) << "device " << d;
    std::map<std::pair<int, int>, std::uint64_t> scheduled;
    for (const Transfer &x : g.schedule.transfers)
        scheduled[{x.from, x.to}] += x.bytes;
    EXPECT_EQ(per_link, scheduled);
}

}  // namespace

TEST(GroupPlacement, FlowSplitsTheRemainderBetweenPeerAndHost)
{
    TwoDevices t;
    const GroupPlacement g = place_group(t.regions, t.free, t.slot, t.link, t.host, PeerPolicy::Flow);
    expect_consistent(t, g);
    // Device 0: 7 slots (4 + 3), keeps 2, remainder 5. Device 1 keeps its 1 and has 5 spare.
    EXPECT_EQ(g.problem.remainder, (std::vector<std::uint64_t>{5, 0}));
    EXPECT_EQ(g.problem.spare, (std::vector<std::uint64_t>{0, 5}));
    // Min-time: 4 slots to the peer (4 slots at 4 slots/us) and 1 to the host (1 slot/us)
    // finish together; the continuous optimum is 5 / (4 + 1) = 1 us.
    EXPECT_EQ(g.schedule.time, schedule_min_time_max_flow(g.problem).time);
    EXPECT_NEAR(g.schedule.time, 1e-6, 1e-12);
    std::uint64_t to_peer = 0, to_host = 0;
    for (const Transfer &x : g.schedule.transfers)
        (x.to == kHost ? to_host : to_peer) += x.bytes;
    EXPECT_EQ(to_peer, 4u);
    EXPECT_EQ(to_host, 1u);
}

TEST(GroupPlacement, PoliciesAreTheScheduleCoresBaselines)
{
    TwoDevices t;
    const GroupPlacement greedy = place_group(t.regions, t.free, t.slot, t.link, t.host, PeerPolicy::Greedy);
    const GroupPlacement local = place_group(t.regions, t.free, t.slot, t.link, t.host, PeerPolicy::Local);
    expect_consistent(t, greedy);
    expect_consistent(t, local);
    EXPECT_EQ(greedy.schedule.time, schedule_greedy(greedy.problem).time);
    // Local-only: the whole remainder (5 slots) to the host at 1 slot/us.
    EXPECT_NEAR(local.schedule.time, 5e-6, 1e-12);
    for (const Transfer &x : local.schedule.transfers)
        EXPECT_EQ(x.to, kHost);
}

TEST(GroupPlacement, NothingScheduledWhenEveryDeviceFits)
{
    TwoDevices t;
    t.free = {10, 10};
    const GroupPlacement g = place_group(t.regions, t.free, t.slot, t.link, t.host, PeerPolicy::Flow);
    expect_consistent(t, g);
    EXPECT_TRUE(g.schedule.transfers.empty());
    for (const Piece &p : g.pieces)
        EXPECT_EQ(p.to, static_cast<int>(t.regions[p.region].device));
}

TEST(GroupPlacement, ErrorsNameTheProblem)
{
    TwoDevices t;
    std::vector<GroupRegion> bad{{2, 10}};
    EXPECT_THROW(place_group(bad, t.free, t.slot, t.link, t.host, PeerPolicy::Flow), std::invalid_argument);
    t.host = {0, 0};
    t.link = {{0, 0}, {0, 0}};
    EXPECT_THROW(place_group(t.regions, t.free, t.slot, t.link, t.host, PeerPolicy::Flow), std::runtime_error);
}

// Random groups: the placement is always consistent with its schedule and, for the flow
// policy, never slower than greedy or local-only.
TEST(GroupPlacement, RandomGroupsFlowIsNeverSlower)
{
    std::mt19937 rng(4545);
    for (int trial = 0; trial < 300; ++trial) {
        TwoDevices t;
        const std::size_t n = 2 + rng() % 3;
        t.free.assign(n, 0);
        t.link.assign(n, std::vector<double>(n, 0));
        t.host.assign(n, 0);
        t.regions.clear();
        for (std::size_t i = 0; i < n; ++i) {
            t.free[i] = rng() % 6;
            t.host[i] = 1e9 * (1 + rng() % 3);
            for (std::size_t j = 0; j < n; ++j)
                t.link[i][j] = i == j || rng() % 3 == 0 ? 0 : 1e9 * (1 + rng() % 8);
        }
        for (int r = 0, regions = 1 + static_cast<int>(rng() % 5); r < regions; ++r)
            t.regions.push_back({rng() % n, 1 + rng() % 4000});
        const GroupPlacement flow = place_group(t.regions, t.free, t.slot, t.link, t.host, PeerPolicy::Flow);
        const GroupPlacement greedy = place_group(t.regions, t.free, t.slot, t.link, t.host, PeerPolicy::Greedy);
        const GroupPlacement local = place_group(t.regions, t.free, t.slot, t.link, t.host, PeerPolicy::Local);
        expect_consistent(t, flow);
        expect_consistent(t, greedy);
        expect_consistent(t, local);
        EXPECT_LE(flow.schedule.time, greedy.schedule.time * (1 + 1e-9) + 1e-15);
        EXPECT_LE(flow.schedule.time, local.schedule.time * (1 + 1e-9) + 1e-15);
    }
}
