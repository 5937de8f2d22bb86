// SPDX-License-Identifier: LGPL-2.1-or-later
// The paper's baselines: SA (single assignment: one task per device, first idle device)
// and CG (core-to-GPU: round robin, at most cg_ratio tasks per device). Both are blind to
// memory, so CG can overcommit a device: the crash risk the paper reports for it.
#include <gtest/gtest.h>

#include "tests/unit/mgb/ledger_test_util.h"

namespace hetpu::mgb {
namespace {

using test::make_ledger;
using test::request;

PlaceRequest cg(uint64_t bytes, uint32_t ratio)
{
    PlaceRequest r = request(bytes, 2, 64);
    r.cg_ratio = ratio;
    return r;
}

TEST(LedgerSingleAssignment, FirstIdleDeviceTakesTheTask)
{
    auto l = make_ledger(3);
    const PlaceResult a = ledger_place(*l, Algorithm::SingleAssignment, request(10, 1, 32));
    const PlaceResult b = ledger_place(*l, Algorithm::SingleAssignment, request(10, 1, 32));
    const PlaceResult c = ledger_place(*l, Algorithm::SingleAssignment, request(10, 1, 32));
    EXPECT_EQ(a.device, 0);
    EXPECT_EQ(b.device, 1);
    EXPECT_EQ(c.device, 2);
    // Every device busy, however small the task and however much room is left.
    const PlaceResult d = ledger_place(*l, Algorithm::SingleAssignment, request(1, 1, 32));
    EXPECT_EQ(d.status, PlaceStatus::WaitForResources);
    // Device 1 ends its task: it is the first idle one.
    ASSERT_TRUE(ledger_release(*l, b.grant));
    EXPECT_EQ(ledger_place(*l, Algorithm::SingleAssignment, request(1, 1, 32)).device, 1);
}

TEST(LedgerSingleAssignment, RecordsWhatItPlaces)
{
    auto l = make_ledger(1);
    // SA is blind to memory in use (one job per device is trusted to be safe; CG's
    // overcommit test below shows the blindness), but what it places is on the ledger.
    const PlaceResult r = ledger_place(*l, Algorithm::SingleAssignment, request(80, 3, 64));
    ASSERT_EQ(r.status, PlaceStatus::Placed);
    EXPECT_EQ(l->devices[0].reserved_bytes, 80u);
    EXPECT_EQ(l->devices[0].in_use_warps, 6u);
    const Grant *g = ledger_find_grant(*l, r.grant);
    EXPECT_EQ(g->algorithm, uint8_t(Algorithm::SingleAssignment));
    EXPECT_EQ(g->per_sm, 0);
    EXPECT_EQ(g->bytes, 80u);
    EXPECT_EQ(g->warps, 6u);
}

TEST(LedgerSingleAssignment, AllowedDevicesAndStatus)
{
    auto l = make_ledger(2);
    PlaceRequest r = request(1, 1, 32);
    r.allowed_devices = 0b10;
    EXPECT_EQ(ledger_place(*l, Algorithm::SingleAssignment, r).device, 1);
    EXPECT_EQ(ledger_place(*l, Algorithm::SingleAssignment, r).status, PlaceStatus::WaitForResources);
    r.allowed_devices = 0;
    EXPECT_EQ(ledger_place(*l, Algorithm::SingleAssignment, r).status, PlaceStatus::NeverFits);
    // A task no device could ever hold is refused, as the StarPU policy refuses it (a
    // simulator that sent it to a device would crash there).
    EXPECT_EQ(ledger_place(*l, Algorithm::SingleAssignment, request(1000, 1, 32)).status, PlaceStatus::NeverFits);
}

TEST(LedgerCoreToGpu, RoundRobinUpToTheRatio)
{
    auto l = make_ledger(2);
    // Ratio 2 on 2 devices: 0, 1, 0, 1, then full.
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1, 2)).device, 0);
    const PlaceResult b = ledger_place(*l, Algorithm::CoreToGpu, cg(1, 2));
    EXPECT_EQ(b.device, 1);
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1, 2)).device, 0);
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1, 2)).device, 1);
    EXPECT_EQ(l->cg_next, 0u);
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1, 2)).status, PlaceStatus::WaitForResources);
    // A slot frees on device 1: the round robin (at device 0, full) moves on to it.
    ASSERT_TRUE(ledger_release(*l, b.grant));
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1, 2)).device, 1);
    EXPECT_EQ(l->cg_next, 0u);
    EXPECT_EQ(l->devices[0].tasks, 2u);
    EXPECT_EQ(l->devices[1].tasks, 2u);
}

TEST(LedgerCoreToGpu, RoundRobinContinuesPastTheChosenDevice)
{
    auto l = make_ledger(3);
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1, 6)).device, 0);
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1, 6)).device, 1);
    // Device 2 excluded for this task: the next allowed after 1 wraps to 0.
    PlaceRequest r = cg(1, 6);
    r.allowed_devices = 0b011;
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, r).device, 0);
    EXPECT_EQ(l->cg_next, 1u);
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1, 6)).device, 1);
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1, 6)).device, 2);
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1, 6)).device, 0);
}

TEST(LedgerCoreToGpu, OvercommitsMemoryAsInThePaper)
{
    auto l = make_ledger(1, test::tiny_spec(16));  // a "16-byte" GPU with CG ratio 3
    for (int i = 0; i < 3; ++i)
        ASSERT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(10, 3)).status, PlaceStatus::Placed);
    // 30 bytes reserved on 16: the out-of-memory crash the paper measured for CG.
    EXPECT_EQ(l->devices[0].reserved_bytes, 30u);
    EXPECT_GT(l->devices[0].reserved_bytes, l->devices[0].capacity());
    EXPECT_EQ(l->devices[0].free_bytes(), 0u);
    EXPECT_EQ(l->devices[0].in_use_warps, 12u);
    // The memory-safe algorithms refuse the same stream: Alg. 3 takes one task.
    auto m = make_ledger(1, test::tiny_spec(16));
    EXPECT_EQ(ledger_place(*m, Algorithm::LeastWarps, cg(10, 3)).status, PlaceStatus::Placed);
    EXPECT_EQ(ledger_place(*m, Algorithm::LeastWarps, cg(10, 3)).status, PlaceStatus::WaitForResources);
    // And releasing an overcommitted device comes back to exactly zero.
    for (const Grant &g : l->grants)
        if (g.id != 0)
            ledger_release(*l, g.id);
    EXPECT_EQ(l->devices[0].reserved_bytes, 0u);
    EXPECT_EQ(l->devices[0].tasks, 0u);
}

TEST(LedgerCoreToGpu, RatioZeroActsAsOne)
{
    auto l = make_ledger(2);
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1, 0)).device, 0);
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1, 0)).device, 1);
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1, 0)).status, PlaceStatus::WaitForResources);
}

TEST(LedgerCoreToGpu, NeverFitsWithoutADeviceThatCouldHoldIt)
{
    auto l = make_ledger(2);
    PlaceRequest r = cg(90, 1);
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, r).status, PlaceStatus::Placed);
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, cg(1000, 1)).status, PlaceStatus::NeverFits);
    r.allowed_devices = 0;
    EXPECT_EQ(ledger_place(*l, Algorithm::CoreToGpu, r).status, PlaceStatus::NeverFits);
    auto empty = make_ledger(0);
    EXPECT_EQ(ledger_place(*empty, Algorithm::CoreToGpu, cg(1, 1)).status, PlaceStatus::NeverFits);
    EXPECT_EQ(ledger_place(*empty, Algorithm::SingleAssignment, cg(1, 1)).status, PlaceStatus::NeverFits);
}

}  // namespace
}  // namespace hetpu::mgb
