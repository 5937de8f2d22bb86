// SPDX-License-Identifier: LGPL-2.1-or-later
// Alg. 2 (Algorithm::Exact): the hardware's round-robin block placement, memory and
// compute both hard, first fit over devices. Every expectation below is computed by hand
// on the toy device of ledger_test_util.h (4 SMs x 8 warps x 4 blocks, 100 bytes).
#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/mgb/ledger_test_util.h"

namespace hetpu::mgb {
namespace {

using test::make_ledger;
using test::request;
using test::tiny_spec;

std::vector<unsigned> sm_blocks(const DeviceState &dev)
{
    return std::vector<unsigned>(dev.sm_blocks, dev.sm_blocks + dev.spec.sms);
}
std::vector<unsigned> sm_warps(const DeviceState &dev)
{
    return std::vector<unsigned>(dev.sm_warps, dev.sm_warps + dev.spec.sms);
}
std::vector<unsigned> grant_blocks(const Ledger &l, uint64_t id)
{
    const Grant *g = ledger_find_grant(l, id);
    if (!g)
        return {};
    return std::vector<unsigned>(g->sm_blocks, g->sm_blocks + l.devices[g->device].spec.sms);
}

TEST(LedgerExact, BlocksGoRoundRobinAndTheRoundRobinGoesOn)
{
    auto l = make_ledger(1);
    // 3 blocks of 2 warps: SM0, SM1, SM2; the hardware goes on at SM3.
    const PlaceResult a = ledger_place(*l, Algorithm::Exact, request(10, 3, 64));
    ASSERT_EQ(a.status, PlaceStatus::Placed);
    EXPECT_EQ(a.device, 0);
    EXPECT_EQ(grant_blocks(*l, a.grant), (std::vector<unsigned>{1, 1, 1, 0}));
    EXPECT_EQ(l->devices[0].next_sm, 3u);
    // 3 more: SM3, SM0, SM1 (wrapping), next at SM2.
    const PlaceResult b = ledger_place(*l, Algorithm::Exact, request(10, 3, 64));
    ASSERT_EQ(b.status, PlaceStatus::Placed);
    EXPECT_EQ(grant_blocks(*l, b.grant), (std::vector<unsigned>{1, 1, 0, 1}));
    EXPECT_EQ(l->devices[0].next_sm, 2u);
    const DeviceState &dev = l->devices[0];
    EXPECT_EQ(sm_blocks(dev), (std::vector<unsigned>{2, 2, 1, 1}));
    EXPECT_EQ(sm_warps(dev), (std::vector<unsigned>{4, 4, 2, 2}));
    EXPECT_EQ(dev.in_use_warps, 12u);
    EXPECT_EQ(dev.reserved_bytes, 20u);
    EXPECT_EQ(dev.tasks, 2u);
    const Grant *g = ledger_find_grant(*l, b.grant);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->per_sm, 1);
    EXPECT_EQ(g->algorithm, uint8_t(Algorithm::Exact));
    EXPECT_EQ(g->warps, 6u);
    EXPECT_EQ(g->warps_per_block, 2u);
    EXPECT_EQ(g->pid, 100);
}

TEST(LedgerExact, SeveralBlocksOfOneTaskShareAnSmOnLaterRounds)
{
    auto l = make_ledger(1);
    // 6 blocks of 1 warp on 4 SMs: SM0..SM3, then SM0, SM1; next at SM2.
    const PlaceResult a = ledger_place(*l, Algorithm::Exact, request(1, 6, 32));
    ASSERT_EQ(a.status, PlaceStatus::Placed);
    EXPECT_EQ(grant_blocks(*l, a.grant), (std::vector<unsigned>{2, 2, 1, 1}));
    EXPECT_EQ(l->devices[0].next_sm, 2u);
}

TEST(LedgerExact, RoundRobinSkipsAnSmThatCannotTakeABlock)
{
    auto l = make_ledger(1);
    // One block of 8 warps fills SM0 (next at SM1).
    ASSERT_EQ(ledger_place(*l, Algorithm::Exact, request(1, 1, 256)).status, PlaceStatus::Placed);
    // Move the round robin to SM3 with two 1-warp blocks (SM1, SM2).
    ASSERT_EQ(ledger_place(*l, Algorithm::Exact, request(1, 2, 32)).status, PlaceStatus::Placed);
    ASSERT_EQ(l->devices[0].next_sm, 3u);
    // 4 blocks of 4 warps from SM3: SM3, (SM0 full) SM1, SM2, SM3 again.
    const PlaceResult c = ledger_place(*l, Algorithm::Exact, request(1, 4, 128));
    ASSERT_EQ(c.status, PlaceStatus::Placed);
    EXPECT_EQ(grant_blocks(*l, c.grant), (std::vector<unsigned>{0, 1, 1, 2}));
    EXPECT_EQ(sm_warps(l->devices[0]), (std::vector<unsigned>{8, 5, 5, 8}));
    EXPECT_EQ(l->devices[0].next_sm, 0u);  // after the last block, on SM3
}

TEST(LedgerExact, BlockLimitPerSmIsHard)
{
    auto l = make_ledger(1);
    // 1-warp blocks: 4 blocks per SM (the block limit, not the 8 warps) => 16 fit.
    ASSERT_EQ(ledger_place(*l, Algorithm::Exact, request(1, 16, 32)).status, PlaceStatus::Placed);
    EXPECT_EQ(sm_blocks(l->devices[0]), (std::vector<unsigned>{4, 4, 4, 4}));
    EXPECT_EQ(sm_warps(l->devices[0]), (std::vector<unsigned>{4, 4, 4, 4}));
    // Half the warps are free, but no SM takes a fifth block.
    EXPECT_EQ(ledger_place(*l, Algorithm::Exact, request(1, 1, 32)).status, PlaceStatus::WaitForResources);
}

TEST(LedgerExact, PartialFitRejectsTheDeviceWithoutTouchingItAndTriesTheNext)
{
    auto l = make_ledger(2);
    // SM0 of device 0 full (8 warps); next_sm = 1.
    ASSERT_EQ(ledger_place(*l, Algorithm::Exact, request(1, 1, 256)).device, 0);
    const DeviceState before = l->devices[0];
    // 4 blocks of 8 warps: SM1, SM2, SM3 of device 0 take one each, then nothing is left.
    const PlaceResult r = ledger_place(*l, Algorithm::Exact, request(1, 4, 256));
    ASSERT_EQ(r.status, PlaceStatus::Placed);
    EXPECT_EQ(r.device, 1);
    EXPECT_EQ(grant_blocks(*l, r.grant), (std::vector<unsigned>{1, 1, 1, 1}));
    // The tentative blocks on device 0 were discarded.
    EXPECT_EQ(sm_blocks(l->devices[0]), sm_blocks(before));
    EXPECT_EQ(sm_warps(l->devices[0]), sm_warps(before));
    EXPECT_EQ(l->devices[0].next_sm, before.next_sm);
    EXPECT_EQ(l->devices[0].in_use_warps, before.in_use_warps);
    EXPECT_EQ(l->devices[0].reserved_bytes, before.reserved_bytes);
    EXPECT_EQ(l->devices[0].tasks, 1u);
}

TEST(LedgerExact, FirstFitOverDevicesEvenWhenALaterOneIsEmptier)
{
    auto l = make_ledger(2);
    ASSERT_EQ(ledger_place(*l, Algorithm::Exact, request(10, 2, 32)).device, 0);
    // Device 1 is empty, but Alg. 2 is first fit: device 0 still has room.
    EXPECT_EQ(ledger_place(*l, Algorithm::Exact, request(10, 2, 32)).device, 0);
}

TEST(LedgerExact, MemoryIsHardAndAnExactFitFits)
{
    auto l = make_ledger(2);
    ASSERT_EQ(ledger_place(*l, Algorithm::Exact, request(60, 1, 32)).device, 0);
    // 41 > 40 free on device 0: device 1.
    EXPECT_EQ(ledger_place(*l, Algorithm::Exact, request(41, 1, 32)).device, 1);
    // Exactly the 40 left on device 0.
    const PlaceResult r = ledger_place(*l, Algorithm::Exact, request(40, 1, 32));
    EXPECT_EQ(r.device, 0);
    EXPECT_EQ(l->devices[0].free_bytes(), 0u);
    // 60 fits nowhere now (59 left on device 1), though it fits an empty device.
    EXPECT_EQ(ledger_place(*l, Algorithm::Exact, request(60, 1, 32)).status, PlaceStatus::WaitForResources);
}

TEST(LedgerExact, SharedMemoryPerSmIsHard)
{
    auto l = make_ledger(1, tiny_spec(100, 4, 100));  // 100 bytes of shared memory per SM
    // 60 bytes per block: one block per SM although warps and blocks would allow more.
    const PlaceResult a = ledger_place(*l, Algorithm::Exact, request(1, 2, 32, 60));
    const PlaceResult b = ledger_place(*l, Algorithm::Exact, request(1, 2, 32, 60));
    ASSERT_EQ(a.status, PlaceStatus::Placed);
    ASSERT_EQ(b.status, PlaceStatus::Placed);
    EXPECT_EQ(grant_blocks(*l, a.grant), (std::vector<unsigned>{1, 1, 0, 0}));
    EXPECT_EQ(grant_blocks(*l, b.grant), (std::vector<unsigned>{0, 0, 1, 1}));
    const DeviceState &dev = l->devices[0];
    EXPECT_EQ(std::vector<unsigned>(dev.sm_shared, dev.sm_shared + 4), (std::vector<unsigned>{60, 60, 60, 60}));
    EXPECT_EQ(ledger_place(*l, Algorithm::Exact, request(1, 1, 32, 60)).status, PlaceStatus::WaitForResources);
    // 40 bytes still fit next to each 60.
    EXPECT_EQ(ledger_place(*l, Algorithm::Exact, request(1, 4, 32, 40)).status, PlaceStatus::Placed);
    EXPECT_EQ(std::vector<unsigned>(dev.sm_shared, dev.sm_shared + 4), (std::vector<unsigned>{100, 100, 100, 100}));
}

TEST(LedgerExact, AGridLargerThanAWaveOccupiesOneWave)
{
    auto l = make_ledger(1);
    // 2-warp blocks: 4 per SM => a wave is 16 blocks; 1000 blocks fill the device once.
    const PlaceResult r = ledger_place(*l, Algorithm::Exact, request(1, 1000, 64));
    ASSERT_EQ(r.status, PlaceStatus::Placed);
    EXPECT_EQ(sm_warps(l->devices[0]), (std::vector<unsigned>{8, 8, 8, 8}));
    EXPECT_EQ(l->devices[0].in_use_warps, 32u);
    EXPECT_EQ(ledger_find_grant(*l, r.grant)->warps, 32u);
}

TEST(LedgerExact, UnknownLaunchTakesTheWholeDevice)
{
    auto l = make_ledger(2);
    const PlaceResult a = ledger_place(*l, Algorithm::Exact, request(1, 0));
    ASSERT_EQ(a.device, 0);
    EXPECT_EQ(sm_warps(l->devices[0]), (std::vector<unsigned>{8, 8, 8, 8}));
    // Even a one-warp task now goes elsewhere.
    EXPECT_EQ(ledger_place(*l, Algorithm::Exact, request(1, 1, 32)).device, 1);
    EXPECT_EQ(ledger_place(*l, Algorithm::Exact, request(1, 0)).status, PlaceStatus::WaitForResources);
}

TEST(LedgerExact, NeverFitsWhenNoAllowedDeviceCouldHoldItEmpty)
{
    auto l = make_ledger(2);
    EXPECT_EQ(ledger_place(*l, Algorithm::Exact, request(101, 1, 32)).status, PlaceStatus::NeverFits);
    // One block of 9 warps exceeds an SM of 8.
    EXPECT_EQ(ledger_place(*l, Algorithm::Exact, request(1, 1, 288)).status, PlaceStatus::NeverFits);
    PlaceRequest none = request(1, 1, 32);
    none.allowed_devices = 0;
    EXPECT_EQ(ledger_place(*l, Algorithm::Exact, none).status, PlaceStatus::NeverFits);
    // Nothing was reserved by the refusals.
    EXPECT_EQ(l->devices[0].tasks + l->devices[1].tasks, 0u);
    EXPECT_EQ(l->next_grant_id, 1u);
}

TEST(LedgerExact, AllowedDevicesAndPerDeviceBytes)
{
    auto l = make_ledger(3);
    PlaceRequest r = request(50, 1, 32);
    r.allowed_devices = 0b100;
    EXPECT_EQ(ledger_place(*l, Algorithm::Exact, r).device, 2);
    // Data already on device 1 makes the task smaller there: 150 nominal bytes fit only
    // on device 1, where 30 remain to be loaded.
    const uint64_t bytes[3] = {150, 30, 150};
    PlaceRequest s = request(150, 1, 32);
    s.bytes_on_device = bytes;
    const PlaceResult p = ledger_place(*l, Algorithm::Exact, s);
    EXPECT_EQ(p.device, 1);
    EXPECT_EQ(ledger_find_grant(*l, p.grant)->bytes, 30u);
    EXPECT_EQ(l->devices[1].reserved_bytes, 30u);
}

TEST(LedgerExact, ReleaseRestoresEveryPerSmCounterAndKeepsTheRoundRobin)
{
    auto l = make_ledger(1);
    const PlaceResult a = ledger_place(*l, Algorithm::Exact, request(10, 3, 64));
    const DeviceState after_a = l->devices[0];
    const PlaceResult b = ledger_place(*l, Algorithm::Exact, request(20, 5, 96, 0));
    ASSERT_EQ(b.status, PlaceStatus::Placed);
    ASSERT_TRUE(ledger_release(*l, b.grant));
    EXPECT_EQ(sm_blocks(l->devices[0]), sm_blocks(after_a));
    EXPECT_EQ(sm_warps(l->devices[0]), sm_warps(after_a));
    EXPECT_EQ(l->devices[0].in_use_warps, after_a.in_use_warps);
    EXPECT_EQ(l->devices[0].reserved_bytes, 10u);
    EXPECT_EQ(l->devices[0].tasks, 1u);
    // 3 + 5 blocks from SM0: the hardware is at SM0 again and stays there.
    EXPECT_EQ(l->devices[0].next_sm, 0u);
    ASSERT_TRUE(ledger_release(*l, a.grant));
    EXPECT_EQ(sm_warps(l->devices[0]), (std::vector<unsigned>{0, 0, 0, 0}));
    EXPECT_EQ(l->devices[0].in_use_warps, 0u);
    EXPECT_EQ(l->devices[0].reserved_bytes, 0u);
}

TEST(LedgerExact, V100HandCase)
{
    auto l = make_ledger(1, *gpu_preset("V100"));
    // 160 blocks of 256 threads: 2 blocks (16 warps) on each of the 80 SMs.
    const PlaceResult r = ledger_place(*l, Algorithm::Exact, request(1 << 30, 160, 256));
    ASSERT_EQ(r.status, PlaceStatus::Placed);
    const DeviceState &dev = l->devices[0];
    for (unsigned s = 0; s < 80; ++s) {
        EXPECT_EQ(dev.sm_blocks[s], 2u) << s;
        EXPECT_EQ(dev.sm_warps[s], 16u) << s;
    }
    EXPECT_EQ(dev.in_use_warps, 1280u);
    EXPECT_EQ(dev.next_sm, 0u);
    // Three more such tasks fill every SM's 64 warps; a fifth must wait.
    for (int i = 0; i < 3; ++i)
        ASSERT_EQ(ledger_place(*l, Algorithm::Exact, request(1 << 20, 160, 256)).status, PlaceStatus::Placed);
    EXPECT_EQ(dev.in_use_warps, dev.spec.max_warps());
    EXPECT_EQ(ledger_place(*l, Algorithm::Exact, request(1, 1, 32)).status, PlaceStatus::WaitForResources);
}

}  // namespace
}  // namespace hetpu::mgb
