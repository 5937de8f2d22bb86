// SPDX-License-Identifier: LGPL-2.1-or-later
// Alg. 3 (Algorithm::LeastWarps) with the erratum of docs/design.md ("MGB Algorithm 3 least-loaded GPU"): among the devices whose
// free memory holds the task, the one with the fewest in-use warps (ties: lowest index).
// Memory is hard, compute soft. Toy device: 4 SMs x 8 warps (32 warps), 100 bytes.
#include <gtest/gtest.h>

#include "tests/unit/mgb/ledger_test_util.h"

namespace hetpu::mgb {
namespace {

using test::make_ledger;
using test::request;
using test::tiny_spec;

// Alg. 3 exactly as the paper prints it (MinWarps <- 0; MemReq < FreeMem;
// MinWarps < G.InUseWarps), to show what the erratum fixes. -1: None.
int printed_algorithm_3(const Ledger &l, uint64_t mem_req)
{
    int target = -1;
    uint64_t min_warps = 0;
    for (unsigned d = 0; d < l.ndevices; ++d) {
        const DeviceState &g = l.devices[d];
        if (mem_req < g.free_bytes() && min_warps < g.in_use_warps) {
            min_warps = g.in_use_warps;
            target = int(d);
        }
    }
    return target;
}

// Puts `warps` one-warp blocks on device d only.
void load(Ledger &l, unsigned d, uint32_t warps, uint64_t bytes = 1)
{
    PlaceRequest r = request(bytes, warps, 32);
    r.allowed_devices = 1u << d;
    ASSERT_EQ(ledger_place(l, Algorithm::LeastWarps, r).device, int(d));
}

TEST(LedgerLeastWarps, ErratumPicksTheLeastLoadedNotTheBusiestDevice)
{
    auto l = make_ledger(2);
    load(*l, 0, 12);  // busy
    load(*l, 1, 3);   // lightly loaded
    // The paper's printed pseudo-code keeps the device with MORE warps: the busiest one.
    EXPECT_EQ(printed_algorithm_3(*l, 10), 0);
    // The intended algorithm (and ours): the least-loaded memory-feasible device.
    const PlaceResult r = ledger_place(*l, Algorithm::LeastWarps, request(10, 2, 32));
    ASSERT_EQ(r.status, PlaceStatus::Placed);
    EXPECT_EQ(r.device, 1);
    EXPECT_EQ(l->devices[1].in_use_warps, 5u);
    EXPECT_EQ(l->devices[0].in_use_warps, 12u);
}

TEST(LedgerLeastWarps, ErratumPlacesOnIdleDevicesWherePrintedCodeFindsNone)
{
    auto l = make_ledger(3);
    // All idle: the printed "0 < InUseWarps" never holds, so it returns None.
    EXPECT_EQ(printed_algorithm_3(*l, 10), -1);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(10, 1, 32)).device, 0);
}

TEST(LedgerLeastWarps, TiesGoToTheLowerIndex)
{
    auto l = make_ledger(3);
    // Equal 4-warp tasks spread 0, 1, 2, then 0 again.
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 4, 32)).device, 0);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 4, 32)).device, 1);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 4, 32)).device, 2);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 4, 32)).device, 0);
}

TEST(LedgerLeastWarps, HandComputedSequence)
{
    auto l = make_ledger(3);
    // warps after each step (d0, d1, d2):
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 10, 32)).device, 0);  // 10 0 0
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 4, 64)).device, 1);   // 10 8 0
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 1, 96)).device, 2);   // 10 8 3
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 6, 32)).device, 2);   // 10 8 9
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 1, 32)).device, 1);   // 10 9 9
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 1, 32)).device, 1);   // 10 10 9 (tie 1,2 -> 1)
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 1, 32)).device, 2);   // 10 10 10
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 1, 32)).device, 0);   // 11 10 10
    EXPECT_EQ(l->devices[0].in_use_warps, 11u);
    EXPECT_EQ(l->devices[1].in_use_warps, 10u);
    EXPECT_EQ(l->devices[2].in_use_warps, 10u);
}

TEST(LedgerLeastWarps, MemoryIsHardAndAnExactFitFits)
{
    auto l = make_ledger(2);
    load(*l, 0, 1, 70);   // d0: 1 warp, 30 bytes free
    load(*l, 1, 16, 10);  // d1: 16 warps, 90 bytes free
    // d0 is less loaded but has only 30 bytes free: d1.
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(31, 1, 32)).device, 1);
    // Exactly 30: d0 (the printed pseudo-code's "<" would refuse it).
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(30, 1, 32)).device, 0);
    EXPECT_EQ(l->devices[0].free_bytes(), 0u);
    // 60 fits neither now (59 on d1): wait; 101 never fits.
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(60, 1, 32)).status, PlaceStatus::WaitForResources);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(101, 1, 32)).status, PlaceStatus::NeverFits);
}

TEST(LedgerLeastWarps, ComputeIsSoftSoWarpsMayExceedTheDevice)
{
    auto l = make_ledger(1);  // 32 warps
    for (int i = 0; i < 3; ++i)
        ASSERT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(10, 0)).status, PlaceStatus::Placed);
    EXPECT_EQ(l->devices[0].in_use_warps, 96u);  // three whole-device footprints
    EXPECT_GT(l->devices[0].in_use_warps, l->devices[0].spec.max_warps());
    EXPECT_EQ(l->devices[0].tasks, 3u);
    // No per-SM bookkeeping for Alg. 3.
    EXPECT_EQ(l->devices[0].sm_warps[0], 0u);
    const Grant *g = nullptr;
    for (const Grant &x : l->grants)
        if (x.id != 0)
            g = &x;
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->per_sm, 0);
    EXPECT_EQ(g->algorithm, uint8_t(Algorithm::LeastWarps));
}

TEST(LedgerLeastWarps, FootprintIsCountedAsOneResidentWave)
{
    auto l = make_ledger(1);
    // 2-warp blocks, 4 per SM: a wave is 16 blocks = 32 warps, whatever the grid size.
    const PlaceResult r = ledger_place(*l, Algorithm::LeastWarps, request(1, 5000, 64));
    EXPECT_EQ(ledger_find_grant(*l, r.grant)->warps, 32u);
    EXPECT_EQ(l->devices[0].in_use_warps, 32u);
}

TEST(LedgerLeastWarps, DeviceWhereABlockCannotRunIsSkipped)
{
    auto l = make_ledger(0);
    GpuSpec small = tiny_spec();
    GpuSpec big = tiny_spec();
    big.max_warps_per_sm = 16;
    ASSERT_EQ(ledger_add_device(*l, "small", small), 0);
    ASSERT_EQ(ledger_add_device(*l, "big", big), 1);
    // 12-warp blocks run only on "big", though "small" is as idle and first.
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 1, 384)).device, 1);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 1, 384)).device, 1);  // soft compute
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(1, 1, 1024)).status, PlaceStatus::NeverFits);
}

TEST(LedgerLeastWarps, AllowedDevicesAndPerDeviceBytes)
{
    auto l = make_ledger(3);
    load(*l, 2, 5);
    PlaceRequest r = request(1, 1, 32);
    r.allowed_devices = 0b110;  // d0 (idle) excluded
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, r).device, 1);
    // d0 and d1 lack memory for the nominal 120 bytes; the data already on d2 leaves 20.
    const uint64_t bytes[3] = {120, 120, 20};
    PlaceRequest s = request(120, 1, 32);
    s.bytes_on_device = bytes;
    const PlaceResult p = ledger_place(*l, Algorithm::LeastWarps, s);
    EXPECT_EQ(p.device, 2);
    EXPECT_EQ(l->devices[2].reserved_bytes, 21u);
    PlaceRequest none = request(1, 1, 32);
    none.allowed_devices = 1u << 5;  // no such device
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, none).status, PlaceStatus::NeverFits);
}

TEST(LedgerLeastWarps, ReleaseMakesTheDeviceTheLeastLoadedAgain)
{
    auto l = make_ledger(2);
    const PlaceResult a = ledger_place(*l, Algorithm::LeastWarps, request(50, 8, 32));
    const PlaceResult b = ledger_place(*l, Algorithm::LeastWarps, request(50, 4, 32));
    ASSERT_EQ(a.device, 0);
    ASSERT_EQ(b.device, 1);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(50, 1, 32)).device, 1);  // 8 vs 4
    ASSERT_TRUE(ledger_release(*l, a.grant));
    EXPECT_EQ(l->devices[0].in_use_warps, 0u);
    EXPECT_EQ(l->devices[0].reserved_bytes, 0u);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(50, 1, 32)).device, 0);
}

}  // namespace
}  // namespace hetpu::mgb
