// SPDX-License-Identifier: LGPL-2.1-or-later
// Placement under time-sliced co-location (gpu_ledger.h): a device takes another process's
// task only where the task's kernels fit the idle gaps of what runs there, and free devices
// are used before any is shared. Each test fails with the Mps placement (the algorithms
// without the rule).
#include <gtest/gtest.h>

#include "tests/unit/mgb/ledger_test_util.h"

using namespace hetpu::mgb;
using namespace hetpu::mgb::test;

namespace {

// A task of process pid whose kernels run busy_permille of the time it holds its device.
PlaceRequest job(int32_t pid, uint32_t busy_permille, uint64_t bytes = 10, uint32_t blocks = 2,
                 Colocation model = Colocation::TimeSliced)
{
    PlaceRequest r = request(bytes, blocks);
    r.pid = pid;
    r.needs.busy_permille = busy_permille;
    r.colocation = model;
    return r;
}

std::unique_ptr<Ledger> big_beside_small()
{
    auto l = make_ledger();
    ledger_add_device(*l, "big", tiny_spec(100, 16));   // 128 warps
    ledger_add_device(*l, "small", tiny_spec(100, 4));  // 32 warps
    return l;
}

}  // namespace

// mgb-exact's first fit stacks two light kernels on device 0 and leaves device 1 idle; taking
// turns, each would run at half speed there.
TEST(LedgerTimeSliced, ExactSpreadsComputeBoundJobsOverFreeDevices)
{
    for (Colocation model : {Colocation::Mps, Colocation::TimeSliced}) {
        auto l = make_ledger(2);
        const PlaceResult a = ledger_place(*l, Algorithm::Exact, job(1, 1000, 10, 2, model));
        const PlaceResult b = ledger_place(*l, Algorithm::Exact, job(2, 1000, 10, 2, model));
        ASSERT_EQ(a.status, PlaceStatus::Placed);
        ASSERT_EQ(b.status, PlaceStatus::Placed);
        EXPECT_EQ(a.device, 0);
        EXPECT_EQ(b.device, model == Colocation::Mps ? 0 : 1) << colocation_name(model);
    }
}

// mgb's warp share sends a second light job to the big device (2 of 128 warps beside 2 is
// less than 2 of 32): under time-slicing the idle small device is the better place.
TEST(LedgerTimeSliced, LeastWarpsSpreadsComputeBoundJobsOverFreeDevices)
{
    for (Colocation model : {Colocation::Mps, Colocation::TimeSliced}) {
        auto l = big_beside_small();
        const PlaceResult a = ledger_place(*l, Algorithm::LeastWarps, job(1, 1000, 10, 2, model));
        const PlaceResult b = ledger_place(*l, Algorithm::LeastWarps, job(2, 1000, 10, 2, model));
        ASSERT_EQ(a.status, PlaceStatus::Placed);
        ASSERT_EQ(b.status, PlaceStatus::Placed);
        EXPECT_EQ(a.device, 0);
        EXPECT_EQ(b.device, model == Colocation::Mps ? 0 : 1) << colocation_name(model);
    }
}

// Every device runs a kernel-bound job: a third one would only take turns with one of them,
// so it waits for a device (and then runs at full speed) rather than share.
TEST(LedgerTimeSliced, KernelBoundJobWaitsRatherThanTakeTurns)
{
    for (Algorithm algorithm : {Algorithm::LeastWarps, Algorithm::Exact}) {
        auto l = make_ledger(2);
        ASSERT_EQ(ledger_place(*l, algorithm, job(1, 1000)).status, PlaceStatus::Placed);
        ASSERT_EQ(ledger_place(*l, algorithm, job(2, 1000)).status, PlaceStatus::Placed);
        EXPECT_EQ(ledger_place(*l, algorithm, job(3, 1000, 10, 2, Colocation::Mps)).status, PlaceStatus::Placed);
        auto t = make_ledger(2);
        const PlaceResult a = ledger_place(*t, algorithm, job(1, 1000));
        ASSERT_EQ(ledger_place(*t, algorithm, job(2, 1000)).status, PlaceStatus::Placed);
        EXPECT_EQ(ledger_place(*t, algorithm, job(3, 1000)).status, PlaceStatus::WaitForResources)
            << algorithm_name(algorithm);
        // A device frees: it goes there.
        ASSERT_TRUE(ledger_release(*t, a.grant));
        const PlaceResult c = ledger_place(*t, algorithm, job(3, 1000));
        EXPECT_EQ(c.status, PlaceStatus::Placed);
        EXPECT_EQ(c.device, a.device);
    }
}

// A job that spends most of its device time in host phases leaves gaps another job's
// kernels fill: the new job goes beside it, not beside the kernel-bound one, even though the
// kernel-bound one occupies fewer warps (which is what mgb's warp share would choose).
TEST(LedgerTimeSliced, HostHeavyJobsGapsAreFilled)
{
    for (Algorithm algorithm : {Algorithm::LeastWarps, Algorithm::Exact}) {
        auto l = make_ledger(2);
        // Device 1 first, so that Exact's first fit would pick device 0.
        PlaceRequest kernel_bound = job(1, 1000, 10, 2);
        kernel_bound.allowed_devices = 1u << 0;
        PlaceRequest host_heavy = job(2, 300, 10, 12);  // 30% of its time in kernels, more warps
        host_heavy.allowed_devices = 1u << 1;
        ASSERT_EQ(ledger_place(*l, algorithm, kernel_bound).device, 0);
        ASSERT_EQ(ledger_place(*l, algorithm, host_heavy).device, 1);

        const PlaceResult fits = ledger_place(*l, algorithm, job(3, 600));
        ASSERT_EQ(fits.status, PlaceStatus::Placed) << algorithm_name(algorithm);
        EXPECT_EQ(fits.device, 1) << algorithm_name(algorithm) << ": 300 + 600 of device 1's time";
        // Device 1's gaps are now 100 of 1000: a job busy 200 would have to take turns.
        EXPECT_EQ(ledger_place(*l, algorithm, job(4, 200)).status, PlaceStatus::WaitForResources);
        EXPECT_EQ(ledger_place(*l, algorithm, job(5, 100)).device, 1);
    }
}

// One process's own tasks share its context: they do not take turns with each other, so a
// process is never held back by its own work (a single StarPU process keeps its behaviour).
TEST(LedgerTimeSliced, OwnTasksDoNotCountAgainstEachOther)
{
    auto l = make_ledger(1);
    ASSERT_EQ(ledger_place(*l, Algorithm::LeastWarps, job(7, 0)).status, PlaceStatus::Placed);  // unknown: 1000
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, job(7, 0)).status, PlaceStatus::Placed);
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, job(8, 1)).status, PlaceStatus::WaitForResources)
        << "another process would take turns with process 7's kernels";
}

// The rule adds a condition; memory still decides first, and a task whose memory does not
// fit is never placed however idle the device's time.
TEST(LedgerTimeSliced, MemoryStillBounds)
{
    for (Algorithm algorithm : {Algorithm::LeastWarps, Algorithm::Exact}) {
        auto l = make_ledger(1, tiny_spec(100));
        ASSERT_EQ(ledger_place(*l, algorithm, job(1, 100, 60)).status, PlaceStatus::Placed);
        EXPECT_EQ(ledger_place(*l, algorithm, job(2, 100, 60)).status, PlaceStatus::WaitForResources);
        EXPECT_EQ(ledger_place(*l, algorithm, job(3, 100, 40)).status, PlaceStatus::Placed);
        EXPECT_LE(l->devices[0].reserved_bytes, l->devices[0].capacity());
    }
}

// A task kept out by the device's time is not waiting for memory: a checkpoint cache must not
// give memory back for it.
TEST(LedgerTimeSliced, TimeBoundWaitIsNoMemoryWait)
{
    auto l = make_ledger(1, tiny_spec(100));
    ASSERT_EQ(ledger_place(*l, Algorithm::LeastWarps, job(1, 1000, 90)).status, PlaceStatus::Placed);
    uint64_t out[kMaxDevices];
    ledger_memory_wait(*l, Algorithm::LeastWarps, job(2, 1000, 20, 2, Colocation::Mps), out);
    EXPECT_EQ(out[0], 20u);
    ledger_memory_wait(*l, Algorithm::LeastWarps, job(2, 1000, 20), out);
    EXPECT_EQ(out[0], 0u);
}

// Filling a device's gaps must not keep it from a task that waited longer: with an older
// task waiting for device 0, a younger one may start there only on its own.
TEST(LedgerTimeSliced, NoGapFillingOnADeviceAnOlderTaskWaitsFor)
{
    for (Algorithm algorithm : {Algorithm::LeastWarps, Algorithm::Exact}) {
        auto l = make_ledger(2);
        PlaceRequest host_heavy = job(1, 300);
        host_heavy.allowed_devices = 1u << 0;
        ASSERT_EQ(ledger_place(*l, algorithm, host_heavy).device, 0);
        PlaceRequest filler = job(2, 300);
        filler.allowed_devices = 1u << 0;
        EXPECT_EQ(ledger_place(*l, algorithm, filler).device, 0) << "nothing older waits: it fills the gaps";
        PlaceRequest younger = job(3, 300);
        younger.older_waiting_devices = 1u << 0;
        const PlaceResult alone = ledger_place(*l, algorithm, younger);
        EXPECT_EQ(alone.device, 1) << "device 1 is free: it may start there on its own";
        PlaceRequest blocked = job(4, 100);
        blocked.older_waiting_devices = 0b11;
        EXPECT_EQ(ledger_place(*l, algorithm, blocked).status, PlaceStatus::WaitForResources)
            << "both devices hold other work an older task waits to use";
    }
}
