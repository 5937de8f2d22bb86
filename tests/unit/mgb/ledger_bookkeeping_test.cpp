// SPDX-License-Identifier: LGPL-2.1-or-later
// The Ledger's bookkeeping: devices, grant ids and slots, release, processes, reclaim of
// dead processes, and rebuilding the derived counters from the grants.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "tests/unit/mgb/ledger_test_util.h"

namespace hetpu::mgb {
namespace {

using test::make_ledger;
using test::request;
using test::tiny_spec;

TEST(LedgerBookkeeping, InitSetsMagicVersionAndFirstGrantId)
{
    auto l = std::make_unique<Ledger>();
    std::memset(static_cast<void *>(l.get()), 0xab, sizeof *l);
    ledger_init(*l);
    EXPECT_EQ(l->magic, kLedgerMagic);
    EXPECT_EQ(l->version, kLedgerVersion);
    EXPECT_EQ(l->ndevices, 0u);
    EXPECT_EQ(l->cg_next, 0u);
    EXPECT_EQ(l->next_grant_id, 1u);
    for (const Grant &g : l->grants)
        ASSERT_EQ(g.id, 0u);
    for (const ProcessEntry &p : l->processes)
        ASSERT_EQ(p.pid, 0);
}

TEST(LedgerBookkeeping, AlgorithmNamesArePolicyNames)
{
    EXPECT_STREQ(algorithm_name(Algorithm::Exact), "mgb-exact");
    EXPECT_STREQ(algorithm_name(Algorithm::LeastWarps), "mgb");
    EXPECT_STREQ(algorithm_name(Algorithm::SingleAssignment), "sa");
    EXPECT_STREQ(algorithm_name(Algorithm::CoreToGpu), "cg");
}

TEST(LedgerBookkeeping, AddDeviceFindsOrAppends)
{
    auto l = make_ledger();
    EXPECT_EQ(ledger_add_device(*l, "cuda:0000:3b:00.0", tiny_spec(100)), 0);
    EXPECT_EQ(ledger_add_device(*l, "cuda:0000:5e:00.0", tiny_spec(200)), 1);
    EXPECT_EQ(l->ndevices, 2u);
    EXPECT_EQ(ledger_find_device(*l, "cuda:0000:5e:00.0"), 1);
    EXPECT_EQ(ledger_find_device(*l, "cuda:0000:3b:00.0"), 0);
    EXPECT_EQ(ledger_find_device(*l, "cuda:0000:3b:00"), -1);  // no prefix match
    EXPECT_EQ(ledger_find_device(*l, "nope"), -1);
    EXPECT_STREQ(l->devices[1].key, "cuda:0000:5e:00.0");
    EXPECT_EQ(l->devices[1].capacity(), 200u);
}

TEST(LedgerBookkeeping, SameDeviceWithoutAProcessGrowsToTheLargestReportAndKeepsTheFirstSpec)
{
    auto l = make_ledger();
    ASSERT_EQ(ledger_add_device(*l, "opencl:0:1", tiny_spec(100, 4)), 0);
    GpuSpec other = tiny_spec(60, 8);
    set_spec_name(other, "other");
    EXPECT_EQ(ledger_add_device(*l, "opencl:0:1", other), 0);
    EXPECT_EQ(l->ndevices, 1u);
    EXPECT_EQ(l->devices[0].capacity(), 100u) << "a smaller report no longer shrinks the device for all";
    EXPECT_EQ(l->devices[0].spec.sms, 4u);  // the first registrant's hardware figures
    EXPECT_STREQ(l->devices[0].spec.name, "tiny");
    EXPECT_EQ(ledger_add_device(*l, "opencl:0:1", tiny_spec(500)), 0);
    EXPECT_EQ(l->devices[0].capacity(), 500u);
}

TEST(LedgerBookkeeping, AddDeviceRejectsBadKeysAndSpecs)
{
    auto l = make_ledger();
    EXPECT_EQ(ledger_add_device(*l, "", tiny_spec()), -EINVAL);
    EXPECT_EQ(ledger_add_device(*l, std::string(kDeviceKeyLength, 'k'), tiny_spec()), -EINVAL);
    EXPECT_EQ(ledger_add_device(*l, std::string(kDeviceKeyLength - 1, 'k'), tiny_spec()), 0);  // room for NUL
    EXPECT_EQ(ledger_find_device(*l, std::string(kDeviceKeyLength - 1, 'k')), 0);
    GpuSpec bad = tiny_spec();
    bad.sms = 0;
    EXPECT_EQ(ledger_add_device(*l, "bad", bad), -EINVAL);
    // Also for a known key: an invalid report never touches the device.
    bad = tiny_spec(1);
    bad.max_blocks_per_sm = 0;
    EXPECT_EQ(ledger_add_device(*l, std::string(kDeviceKeyLength - 1, 'k'), bad), -EINVAL);
    EXPECT_EQ(l->devices[0].capacity(), 100u);
    EXPECT_EQ(l->ndevices, 1u);
}

TEST(LedgerBookkeeping, AddDeviceFailsWhenFull)
{
    auto l = make_ledger(kMaxDevices);
    EXPECT_EQ(l->ndevices, kMaxDevices);
    EXPECT_EQ(ledger_add_device(*l, "one-too-many", tiny_spec()), -ENOSPC);
    // A known device is still found.
    EXPECT_EQ(ledger_add_device(*l, "dev:3", tiny_spec()), 3);
}

TEST(LedgerBookkeeping, GrantIdsAreUniqueAndIncreasing)
{
    auto l = make_ledger(2);
    uint64_t last = 0;
    std::vector<uint64_t> ids;
    for (int i = 0; i < 6; ++i) {
        const PlaceResult r = ledger_place(*l, Algorithm::LeastWarps, request(1, 1, 32));
        ASSERT_EQ(r.status, PlaceStatus::Placed);
        EXPECT_GT(r.grant, last);
        last = r.grant;
        ids.push_back(r.grant);
    }
    EXPECT_EQ(ids.front(), 1u);
    // A released id is never handed out again.
    ASSERT_TRUE(ledger_release(*l, ids[2]));
    const PlaceResult r = ledger_place(*l, Algorithm::LeastWarps, request(1, 1, 32));
    EXPECT_EQ(r.grant, 7u);
    const Grant *g = ledger_find_grant(*l, r.grant);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->id, 7u);
    EXPECT_EQ(g->device, uint16_t(r.device));
}

TEST(LedgerBookkeeping, ReleaseOnlyLiveGrants)
{
    auto l = make_ledger(1);
    const PlaceResult r = ledger_place(*l, Algorithm::Exact, request(40, 3, 64));
    EXPECT_FALSE(ledger_release(*l, 0));
    EXPECT_FALSE(ledger_release(*l, r.grant + 1));
    EXPECT_TRUE(ledger_release(*l, r.grant));
    EXPECT_FALSE(ledger_release(*l, r.grant));  // not twice
    EXPECT_EQ(ledger_find_grant(*l, r.grant), nullptr);
    EXPECT_EQ(ledger_find_grant(*l, 0), nullptr);
    const DeviceState &d = l->devices[0];
    EXPECT_EQ(d.reserved_bytes, 0u);
    EXPECT_EQ(d.in_use_warps, 0u);
    EXPECT_EQ(d.tasks, 0u);
    for (unsigned s = 0; s < d.spec.sms; ++s)
        EXPECT_EQ(d.sm_warps[s] + d.sm_blocks[s] + d.sm_shared[s], 0u);
}

TEST(LedgerBookkeeping, FullGrantTableMeansWait)
{
    GpuSpec huge = tiny_spec(1);
    huge.sms = kMaxSms;
    huge.max_blocks_per_sm = 255;
    huge.max_warps_per_sm = 4096;
    auto l = make_ledger(1, huge);
    std::vector<uint64_t> ids;
    for (unsigned i = 0; i < kMaxGrants; ++i) {
        const PlaceResult r = ledger_place(*l, Algorithm::LeastWarps, request(0, 1, 32));
        ASSERT_EQ(r.status, PlaceStatus::Placed) << i;
        ids.push_back(r.grant);
    }
    for (Algorithm a : {Algorithm::Exact, Algorithm::LeastWarps, Algorithm::SingleAssignment, Algorithm::CoreToGpu}) {
        PlaceRequest r = request(0, 1, 32);
        r.cg_ratio = 100000;
        EXPECT_EQ(ledger_place(*l, a, r).status, PlaceStatus::WaitForResources) << algorithm_name(a);
    }
    const uint64_t next = l->next_grant_id;
    EXPECT_EQ(l->devices[0].tasks, kMaxGrants);
    ASSERT_TRUE(ledger_release(*l, ids[500]));
    const PlaceResult r = ledger_place(*l, Algorithm::LeastWarps, request(0, 1, 32));
    EXPECT_EQ(r.status, PlaceStatus::Placed);
    EXPECT_EQ(r.grant, next);  // the refusals consumed no id
}

TEST(LedgerBookkeeping, CouldEverFitLooksAtAnEmptyDevice)
{
    auto l = make_ledger(2);
    ASSERT_EQ(ledger_place(*l, Algorithm::LeastWarps, request(100, 0)).device, 0);  // device 0 full
    EXPECT_TRUE(could_ever_fit(*l, 0, request(100, 1, 32)));                        // once its task ends
    EXPECT_FALSE(could_ever_fit(*l, 0, request(101, 1, 32)));
    EXPECT_FALSE(could_ever_fit(*l, 0, request(1, 1, 288)));  // 9 warps > an SM's 8
    EXPECT_TRUE(could_ever_fit(*l, 0, request(1, 1, 256)));
    EXPECT_TRUE(could_ever_fit(*l, 1, request(1, 0)));       // unknown launch: the whole device
    EXPECT_FALSE(could_ever_fit(*l, 2, request(1, 1, 32)));  // no such device
    EXPECT_FALSE(could_ever_fit(*l, -1, request(1, 1, 32)));
    PlaceRequest r = request(1, 1, 32);
    r.allowed_devices = 0b10;
    EXPECT_FALSE(could_ever_fit(*l, 0, r));  // the request excludes it
    EXPECT_TRUE(could_ever_fit(*l, 1, r));
    const uint64_t bytes[2] = {100, 101};
    PlaceRequest s = request(1, 1, 32);
    s.bytes_on_device = bytes;
    EXPECT_TRUE(could_ever_fit(*l, 0, s));
    EXPECT_FALSE(could_ever_fit(*l, 1, s));
}

TEST(LedgerBookkeeping, AttachIsIdempotentAndBounded)
{
    auto l = make_ledger(1);
    EXPECT_EQ(ledger_attach_process(*l, 42, "mgb"), 0);
    EXPECT_EQ(ledger_attach_process(*l, 42, "mgb"), 0);
    unsigned n = 0;
    for (const ProcessEntry &p : l->processes)
        n += p.pid == 42;
    EXPECT_EQ(n, 1u);
    EXPECT_EQ(ledger_attach_process(*l, 0, "mgb"), -EINVAL);
    for (int32_t pid = 1000; pid < 1000 + int32_t(kMaxProcesses) - 1; ++pid)
        ASSERT_EQ(ledger_attach_process(*l, pid, "mgb-exact"), 0);
    EXPECT_EQ(ledger_attach_process(*l, 5, "sa"), -ENOSPC);
    EXPECT_EQ(ledger_attach_process(*l, 42, "mgb"), 0);  // already there: still fine
    ledger_detach_process(*l, 1000);
    EXPECT_EQ(ledger_attach_process(*l, 5, "a-very-long-policy-name"), 0);
    for (const ProcessEntry &p : l->processes) {
        if (p.pid == 5) {
            EXPECT_EQ(std::string(p.policy), std::string("a-very-long-pol"));  // truncated, terminated
        }
    }
}

TEST(LedgerBookkeeping, DetachReleasesOnlyThatProcessesGrants)
{
    auto l = make_ledger(2);
    ASSERT_EQ(ledger_attach_process(*l, 7, "mgb"), 0);
    ASSERT_EQ(ledger_attach_process(*l, 8, "mgb"), 0);
    ledger_set_waiting(*l, 7, 3);
    PlaceRequest a = request(10, 2, 32);
    a.pid = 7;
    PlaceRequest b = request(20, 2, 32);
    b.pid = 8;
    ledger_place(*l, Algorithm::LeastWarps, a);
    ledger_place(*l, Algorithm::LeastWarps, a);
    ledger_place(*l, Algorithm::Exact, a);
    const PlaceResult kept = ledger_place(*l, Algorithm::LeastWarps, b);
    EXPECT_EQ(ledger_detach_process(*l, 7), 3u);
    EXPECT_EQ(ledger_detach_process(*l, 7), 0u);
    for (const ProcessEntry &p : l->processes)
        EXPECT_NE(p.pid, 7);
    ASSERT_NE(ledger_find_grant(*l, kept.grant), nullptr);
    EXPECT_EQ(l->devices[0].reserved_bytes + l->devices[1].reserved_bytes, 20u);
    EXPECT_EQ(l->devices[0].tasks + l->devices[1].tasks, 1u);
    EXPECT_EQ(l->devices[0].in_use_warps + l->devices[1].in_use_warps, 2u);
    EXPECT_EQ(ledger_detach_process(*l, 0), 0u);  // pid 0 is "free slot", never a process
}

TEST(LedgerBookkeeping, SetWaitingRecordsPerProcess)
{
    auto l = make_ledger(0);
    ASSERT_EQ(ledger_attach_process(*l, 9, "mgb"), 0);
    ledger_set_waiting(*l, 9, 4);
    ledger_set_waiting(*l, 10, 5);  // unknown pid: ignored
    for (const ProcessEntry &p : l->processes) {
        if (p.pid == 9) {
            EXPECT_EQ(p.waiting, 4u);
        } else {
            EXPECT_EQ(p.waiting, 0u);
        }
    }
}

std::set<int32_t> g_dead;
std::vector<int32_t> g_asked;
bool fake_alive(int32_t pid)
{
    g_asked.push_back(pid);
    return g_dead.count(pid) == 0;
}

TEST(LedgerBookkeeping, ReclaimDeadReleasesDeadProcessesAndOrphanGrants)
{
    auto l = make_ledger(2);
    for (int32_t pid : {11, 12})
        ASSERT_EQ(ledger_attach_process(*l, pid, "mgb"), 0);
    auto place_for = [&](int32_t pid, uint64_t bytes) {
        PlaceRequest r = request(bytes, 1, 32);
        r.pid = pid;
        return ledger_place(*l, Algorithm::Exact, r);
    };
    place_for(11, 5);
    place_for(11, 5);
    const PlaceResult live = place_for(12, 7);
    place_for(13, 9);                             // never attached (say its entry was lost), then died
    const PlaceResult unowned = place_for(0, 3);  // no known holder: never reclaimed

    g_dead = {11, 13};
    g_asked.clear();
    EXPECT_EQ(ledger_reclaim_dead(*l, fake_alive), 3u);
    for (const ProcessEntry &p : l->processes)
        EXPECT_NE(p.pid, 11);
    bool twelve = false;
    for (const ProcessEntry &p : l->processes)
        twelve |= p.pid == 12;
    EXPECT_TRUE(twelve);
    EXPECT_NE(ledger_find_grant(*l, live.grant), nullptr);
    EXPECT_NE(ledger_find_grant(*l, unowned.grant), nullptr);
    EXPECT_EQ(l->devices[0].reserved_bytes + l->devices[1].reserved_bytes, 10u);
    EXPECT_EQ(l->devices[0].tasks + l->devices[1].tasks, 2u);
    for (int32_t pid : g_asked)
        EXPECT_GT(pid, 0);  // alive() is never asked about pid 0
    // Nothing more to reclaim.
    EXPECT_EQ(ledger_reclaim_dead(*l, fake_alive), 0u);
    g_dead.clear();
}

bool counters_equal(const Ledger &a, const Ledger &b)
{
    if (a.ndevices != b.ndevices)
        return false;
    for (unsigned d = 0; d < a.ndevices; ++d) {
        const DeviceState &x = a.devices[d];
        const DeviceState &y = b.devices[d];
        if (x.reserved_bytes != y.reserved_bytes || x.in_use_warps != y.in_use_warps || x.tasks != y.tasks ||
            x.next_sm != y.next_sm || std::memcmp(x.sm_blocks, y.sm_blocks, sizeof x.sm_blocks) != 0 ||
            std::memcmp(x.sm_warps, y.sm_warps, sizeof x.sm_warps) != 0 ||
            std::memcmp(x.sm_shared, y.sm_shared, sizeof x.sm_shared) != 0)
            return false;
    }
    return true;
}

TEST(LedgerBookkeeping, RebuildCountersEqualsIncrementalCountersAfterRandomSequences)
{
    std::mt19937 rng(12345);
    for (Algorithm algorithm :
         {Algorithm::Exact, Algorithm::LeastWarps, Algorithm::SingleAssignment, Algorithm::CoreToGpu}) {
        SCOPED_TRACE(algorithm_name(algorithm));
        auto l = make_ledger(0);
        ledger_add_device(*l, "a", tiny_spec(1000, 4, 256));
        ledger_add_device(*l, "b", tiny_spec(700, 7, 0));
        ledger_add_device(*l, "c", *gpu_preset("V100"));
        std::vector<uint64_t> live;
        unsigned placed = 0;
        for (int step = 0; step < 3000; ++step) {
            if (!live.empty() && rng() % 5 < 2) {
                const size_t k = rng() % live.size();
                ASSERT_TRUE(ledger_release(*l, live[k]));
                live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
            } else {
                PlaceRequest r = request(rng() % 200, rng() % 20, 32 * (1 + rng() % 8), 16 * (rng() % 8));
                r.allowed_devices = 1 + rng() % 7;
                r.cg_ratio = 1 + rng() % 4;
                r.pid = int32_t(1 + rng() % 3);
                const PlaceResult p = ledger_place(*l, algorithm, r);
                if (p.status == PlaceStatus::Placed) {
                    live.push_back(p.grant);
                    ++placed;
                }
            }
            if (step % 100 == 0) {
                auto copy = std::make_unique<Ledger>(*l);
                ledger_rebuild_counters(*copy);
                ASSERT_TRUE(counters_equal(*l, *copy)) << "step " << step;
                EXPECT_EQ(copy->next_grant_id, l->next_grant_id);
            }
        }
        EXPECT_GT(placed, 200u);
        auto copy = std::make_unique<Ledger>(*l);
        ledger_rebuild_counters(*copy);
        EXPECT_TRUE(counters_equal(*l, *copy));
        // Releasing everything returns every counter to zero.
        for (uint64_t id : live)
            ASSERT_TRUE(ledger_release(*l, id));
        auto empty = make_ledger(0);
        *empty = *l;
        ledger_rebuild_counters(*empty);
        EXPECT_TRUE(counters_equal(*l, *empty));
        for (unsigned d = 0; d < l->ndevices; ++d) {
            EXPECT_EQ(l->devices[d].reserved_bytes, 0u);
            EXPECT_EQ(l->devices[d].in_use_warps, 0u);
            EXPECT_EQ(l->devices[d].tasks, 0u);
        }
    }
}

TEST(LedgerBookkeeping, RebuildRepairsCorruptedCountersAndGrantIds)
{
    auto l = make_ledger(2);
    const PlaceResult a = ledger_place(*l, Algorithm::Exact, request(30, 5, 64));
    ledger_place(*l, Algorithm::LeastWarps, request(20, 3, 32));
    auto good = std::make_unique<Ledger>(*l);
    // A lock holder died mid-update: counters half written, the id counter not moved on.
    l->devices[0].reserved_bytes = 999;
    l->devices[0].sm_warps[2] = 77;
    l->devices[1].tasks = 0;
    l->devices[1].in_use_warps = 12345;
    l->next_grant_id = a.grant;  // would reuse a live id
    ledger_rebuild_counters(*l);
    EXPECT_TRUE(counters_equal(*l, *good));
    EXPECT_EQ(l->next_grant_id, good->next_grant_id);
    const PlaceResult c = ledger_place(*l, Algorithm::LeastWarps, request(1, 1, 32));
    EXPECT_EQ(c.grant, 3u);
}

}  // namespace
}  // namespace hetpu::mgb

namespace hetpu::mgb {
namespace {

// A checkpoint cache's memory-only reservations: memory that tasks placed by any
// algorithm must fit beside, but no task: SA still sees the device idle.
TEST(LedgerMemoryOnly, ReservesMemoryButIsNoTask)
{
    auto l = test::make_ledger(1, test::tiny_spec(100));
    const uint64_t r = ledger_reserve_memory(*l, 0, 100, 60);
    ASSERT_NE(r, 0u);
    EXPECT_EQ(l->devices[0].reserved_bytes, 60u);
    EXPECT_EQ(l->devices[0].tasks, 0u);
    EXPECT_EQ(ledger_reserve_memory(*l, 0, 100, 41), 0u) << "over the device's free memory";
    EXPECT_EQ(ledger_reserve_memory(*l, 1, 100, 1), 0u) << "unknown device";
    EXPECT_EQ(ledger_place(*l, Algorithm::LeastWarps, test::request(41, 1)).status, PlaceStatus::WaitForResources);
    const PlaceResult sa = ledger_place(*l, Algorithm::SingleAssignment, test::request(40, 1));
    EXPECT_EQ(sa.status, PlaceStatus::Placed) << "SA sees no task on the device";
    ledger_rebuild_counters(*l);
    EXPECT_EQ(l->devices[0].tasks, 1u) << "rebuilt: still only the task";
    EXPECT_EQ(l->devices[0].reserved_bytes, 100u);
    EXPECT_TRUE(ledger_release(*l, r));
    EXPECT_EQ(l->devices[0].reserved_bytes, 40u);
    EXPECT_EQ(l->devices[0].tasks, 1u);
}

TEST(LedgerMemoryOnly, BoundedByTheProcessLimitAndReclaimedWithIt)
{
    auto l = test::make_ledger();
    ASSERT_EQ(ledger_attach_process(*l, 7, "mgb"), 0);
    ASSERT_EQ(ledger_attach_process(*l, 9, "mgb"), 0);
    ASSERT_EQ(ledger_add_device(*l, "dev:0", test::tiny_spec(100), 9), 0);  // the device: 100
    ASSERT_EQ(ledger_add_device(*l, "dev:0", test::tiny_spec(30), 7), 0);   // process 7's limit: 30
    EXPECT_EQ(ledger_reserve_memory(*l, 0, 7, 31), 0u);
    EXPECT_NE(ledger_reserve_memory(*l, 0, 7, 30), 0u);
    EXPECT_NE(ledger_reserve_memory(*l, 0, 8, 50), 0u) << "another, unregistered pid: the device's memory";
    EXPECT_EQ(ledger_reclaim_dead(*l, [](int32_t pid) { return pid != 8; }), 1u);
    EXPECT_EQ(l->devices[0].reserved_bytes, 30u);
}

// What a waiting task lacks in memory, for a checkpoint cache to give back: only
// where memory alone keeps it waiting, never for a wait for compute.
TEST(LedgerMemoryWait, OnlyWhereMemoryAloneKeepsTheTaskWaiting)
{
    auto l = test::make_ledger(2, test::tiny_spec(100));
    ASSERT_NE(ledger_reserve_memory(*l, 0, 100, 70), 0u);  // device 0: 30 free
    uint64_t wait[kMaxDevices];
    PlaceRequest r = test::request(50, 1);
    ledger_memory_wait(*l, Algorithm::LeastWarps, r, wait);
    EXPECT_EQ(wait[0], 50u) << "device 0 lacks memory only";
    EXPECT_EQ(wait[1], 0u) << "device 1 has room: the task would start there";
    r.allowed_devices = 1u;  // device 0 only
    ledger_memory_wait(*l, Algorithm::SingleAssignment, r, wait);
    EXPECT_EQ(wait[0], 0u) << "SA never waits for memory";
    ledger_memory_wait(*l, Algorithm::CoreToGpu, r, wait);
    EXPECT_EQ(wait[0], 0u) << "nor does CG";
    // Exact: compute is hard. Device 0's SMs full: the task waits for compute there, and
    // memory given back would not start it.
    const PlaceResult full = ledger_place(*l, Algorithm::Exact, test::request(10, 16, 64));
    ASSERT_EQ(full.status, PlaceStatus::Placed);
    ASSERT_EQ(full.device, 0);
    ledger_memory_wait(*l, Algorithm::Exact, r, wait);
    EXPECT_EQ(wait[0], 0u) << "a wait for compute";
    ASSERT_TRUE(ledger_release(*l, full.grant));
    ledger_memory_wait(*l, Algorithm::Exact, r, wait);
    EXPECT_EQ(wait[0], 50u) << "SMs free again: memory is what it lacks";
    r.needs.bytes = 101;
    ledger_memory_wait(*l, Algorithm::LeastWarps, r, wait);
    EXPECT_EQ(wait[0], 0u) << "could never fit: no memory given back helps";
}

TEST(LedgerMemoryWait, LackCountsTheWaitersOwnLimit)
{
    auto l = test::make_ledger();
    ASSERT_EQ(ledger_attach_process(*l, 7, "mgb"), 0);
    ASSERT_EQ(ledger_attach_process(*l, 9, "mgb"), 0);
    ASSERT_EQ(ledger_add_device(*l, "dev:0", test::tiny_spec(100), 9), 0);
    ASSERT_EQ(ledger_add_device(*l, "dev:0", test::tiny_spec(60), 7), 0);  // process 7's limit: 60
    ASSERT_NE(ledger_reserve_memory(*l, 0, 9, 60), 0u);                    // 40 free on the device
    EXPECT_EQ(ledger_memory_lack(*l, 7, 0, 30, 9), 0u) << "fits now";
    EXPECT_EQ(ledger_memory_lack(*l, 7, 0, 50, 9), 10u) << "process 9 gives back 10";
    EXPECT_EQ(ledger_memory_lack(*l, 7, 0, 70, 9), UINT64_MAX) << "over 7's own limit: 9 cannot help";
    ASSERT_NE(ledger_reserve_memory(*l, 0, 7, 30), 0u);  // 7 holds 30 of its 60; 10 free on the device
    EXPECT_EQ(ledger_memory_lack(*l, 7, 0, 40, 7), 30u) << "its own releases count twice: 10 + 30 = 40";
    EXPECT_EQ(ledger_memory_lack(*l, 7, 0, 40, 9), UINT64_MAX) << "7 has 30 left under its limit";
    EXPECT_EQ(ledger_memory_lack(*l, 7, 1, 1, 9), UINT64_MAX) << "unknown device";
    uint64_t wait[kMaxDevices] = {};
    wait[0] = 40;
    ledger_set_waiting(*l, 7, 2, wait);
    EXPECT_EQ(l->processes[0].memory_wait_bytes[0], 40u);
    ledger_set_waiting(*l, 7, 0, wait);
    EXPECT_EQ(l->processes[0].memory_wait_bytes[0], 0u) << "nothing waits: nothing wanted";
}

}  // namespace
}  // namespace hetpu::mgb
