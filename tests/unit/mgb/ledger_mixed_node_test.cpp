// SPDX-License-Identifier: LGPL-2.1-or-later
// The Ledger on a node whose processes and devices differ. Each test fails on the
// Ledger without the rule it names.
#include <gtest/gtest.h>

#include "tests/unit/mgb/ledger_test_util.h"

using namespace hetpu::mgb;
using namespace hetpu::mgb::test;

namespace {

PlaceRequest from(int32_t pid, uint64_t bytes, uint32_t blocks = 1)
{
    PlaceRequest r = request(bytes, blocks);
    r.pid = pid;
    return r;
}

}  // namespace

// Mixed memory limits: a process's smaller limit bounds that process only, and the device's capacity
// comes back when the process with the larger one exits (it used to keep the smallest, for
// good, and the first process was then held to the other's limit).
TEST(LedgerMixedNode, OwnLimitBoundsOnlyItsProcessAndCapacityFollowsTheLiveProcesses)
{
    auto l = make_ledger();
    ASSERT_EQ(ledger_attach_process(*l, 1, "mgb"), 0);
    ASSERT_EQ(ledger_attach_process(*l, 2, "mgb"), 0);
    ASSERT_EQ(ledger_add_device(*l, "opencl:0:1", tiny_spec(96), 1), 0);
    ASSERT_EQ(ledger_add_device(*l, "opencl:0:1", tiny_spec(16), 2), 0);
    EXPECT_EQ(l->devices[0].capacity(), 96u);

    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, from(1, 72)).status, PlaceStatus::Placed);
    // Process 2 may hold at most its own 16, and only what is left on the device.
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, from(2, 17)).status, PlaceStatus::NeverFits);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, from(2, 12)).status, PlaceStatus::Placed);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, from(2, 8)).status, PlaceStatus::WaitForResources)
        << "12 + 8 is past process 2's own 16";
    EXPECT_EQ(l->processes[1].reserved_bytes[0], 12u);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, from(1, 12)).status, PlaceStatus::Placed);
    EXPECT_LE(l->devices[0].reserved_bytes, l->devices[0].capacity());

    // Process 1 (96) exits: the device is what process 2 runs under.
    ledger_detach_process(*l, 1);
    EXPECT_EQ(l->devices[0].capacity(), 16u);
    // Process 1 comes back and process 2 exits: its 16 must not stay.
    ASSERT_EQ(ledger_attach_process(*l, 1, "mgb"), 0);
    ASSERT_EQ(ledger_add_device(*l, "opencl:0:1", tiny_spec(96), 1), 0);
    ledger_detach_process(*l, 2);
    EXPECT_EQ(l->devices[0].capacity(), 96u);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, from(1, 90)).status, PlaceStatus::Placed);
}

// Node-wide aging. A process whose tasks wait is passed over by at most
// kNodeAgingLimit grants to others; then only it may be granted a device (it used to wait
// until the process that kept freeing and re-taking memory had finished all its work).
TEST(LedgerMixedNode, WaitingProcessAgesAgainstTheOthers)
{
    auto l = make_ledger(1, tiny_spec(100));
    ASSERT_EQ(ledger_attach_process(*l, 1, "mgb"), 0);
    ASSERT_EQ(ledger_attach_process(*l, 2, "mgb"), 0);
    ledger_set_waiting(*l, 2, 1);  // process 2 has a task that fits nowhere yet
    for (uint32_t i = 0; i < kNodeAgingLimit; ++i) {
        const PlaceResult r = ledger_place(*l, Algorithm::LeastWarps, from(1, 1));
        ASSERT_EQ(r.status, PlaceStatus::Placed) << i;
        ledger_release(*l, r.grant);
    }
    EXPECT_EQ(l->processes[1].bypassed, kNodeAgingLimit);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, from(1, 1)).status, PlaceStatus::WaitForResources)
        << "process 1 has passed process 2 over often enough";
    // Process 2's turn: once it is granted a device, process 1 may go on.
    ASSERT_EQ(ledger_place(*l, Algorithm::LeastWarps, from(2, 50)).status, PlaceStatus::Placed);
    EXPECT_EQ(l->processes[1].bypassed, 0u);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, from(1, 1)).status, PlaceStatus::Placed);
}

TEST(LedgerMixedNode, TwoStarvedProcessesNeverBlockEachOther)
{
    auto l = make_ledger(1, tiny_spec(100));
    for (int32_t pid : {1, 2, 3})
        ASSERT_EQ(ledger_attach_process(*l, pid, "mgb"), 0);
    ledger_set_waiting(*l, 2, 1);
    ledger_set_waiting(*l, 3, 1);
    for (uint32_t i = 0; i < kNodeAgingLimit; ++i)
        ledger_release(*l, ledger_place(*l, Algorithm::LeastWarps, from(1, 1)).grant);
    // Both waited as long: the lower pid goes first, then the other, never neither.
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, from(3, 1)).status, PlaceStatus::WaitForResources);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, from(2, 1)).status, PlaceStatus::Placed);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, from(3, 1)).status, PlaceStatus::Placed);
    // A process with nothing waiting does not age.
    ledger_set_waiting(*l, 2, 0);
    EXPECT_EQ(l->processes[1].bypassed, 0u);
}

// Shared data stays counted while a task on the device still uses it.
TEST(LedgerMixedNode, SharedHandleStaysReservedWhileAnyHolderRuns)
{
    auto l = make_ledger(1, tiny_spec(96));
    HandleResidency residency(1);
    const int shared = 0;
    const std::vector<HandleUse> handles = {{&shared, 8}};
    // Two tasks of 4 MiB scratch sharing one 8 MiB handle: 12 for the first, 4 for the second.
    uint64_t grants[2];
    for (uint64_t &g : grants) {
        PlaceRequest r = request(4 + residency.new_bytes(0, handles), 1);
        const PlaceResult p = ledger_place(*l, Algorithm::LeastWarps, r);
        ASSERT_EQ(p.status, PlaceStatus::Placed);
        residency.hold(0, p.grant, handles);
        g = p.grant;
    }
    EXPECT_EQ(l->devices[0].reserved_bytes, 16u);
    const auto handed = residency.drop(0, grants[0], handles);
    ASSERT_TRUE(ledger_release_handing_over(*l, grants[0], handed.data(), handed.size()));
    EXPECT_EQ(l->devices[0].reserved_bytes, 12u) << "the second task's 4 and the handle it still uses";
    EXPECT_EQ(ledger_find_grant(*l, grants[1])->bytes, 12u);
    const auto last = residency.drop(0, grants[1], handles);
    ASSERT_TRUE(ledger_release_handing_over(*l, grants[1], last.data(), last.size()));
    EXPECT_EQ(l->devices[0].reserved_bytes, 0u);
}

// Load is a share of each device. A 32-SM GPU beside an 8-SM one of equal memory,
// identical device-filling tasks: they alternate (absolute warps sent three in four to the
// small one, since a device-filling task occupies a quarter as many warps there).
TEST(LedgerMixedNode, LeastLoadedIsAShareOfEachDevice)
{
    auto l = make_ledger();
    ASSERT_EQ(ledger_add_device(*l, "big", tiny_spec(1000, 32)), 0);
    ASSERT_EQ(ledger_add_device(*l, "small", tiny_spec(1000, 8)), 1);
    unsigned on[2] = {0, 0};
    for (int i = 0; i < 8; ++i) {
        const PlaceResult p = ledger_place(*l, Algorithm::LeastWarps, request(1, 10000));
        ASSERT_EQ(p.status, PlaceStatus::Placed);
        ++on[p.device];
    }
    EXPECT_EQ(on[0], 4u);
    EXPECT_EQ(on[1], 4u);
}

// SA and CG skip a device the task could never fit, as the StarPU policies do.
TEST(LedgerMixedNode, BaselinesSkipDevicesTooSmallForTheTask)
{
    for (Algorithm a : {Algorithm::SingleAssignment, Algorithm::CoreToGpu}) {
        auto l = make_ledger();
        ASSERT_EQ(ledger_add_device(*l, "v100", tiny_spec(16)), 0);
        ASSERT_EQ(ledger_add_device(*l, "a100", tiny_spec(40)), 1);
        PlaceRequest r = request(30, 1);
        r.cg_ratio = 2;
        const PlaceResult p = ledger_place(*l, a, r);
        EXPECT_EQ(p.device, 1) << algorithm_name(a);
        EXPECT_EQ(ledger_place(*l, a, request(50, 1)).status, PlaceStatus::NeverFits) << algorithm_name(a);
    }
}
