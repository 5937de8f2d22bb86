// SPDX-License-Identifier: LGPL-2.1-or-later
// LocalLedger: the process-local Ledger behind the LedgerAccess interface.
#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>
#include <vector>

#include "node_arbiter/ledger_access.h"
#include "tests/unit/node_arbiter/arbiter_test_util.h"

namespace hetpu::mgb {
namespace {

using test::live_grants;
using test::place_on;

TEST(LocalLedger, StartsEmptyAndInitialised)
{
    LocalLedger local;
    EXPECT_FALSE(local.node_wide());
    EXPECT_EQ(local.describe(), "process-local");
    local.with_ledger([](Ledger &ledger) {
        EXPECT_EQ(ledger.magic, kLedgerMagic);
        EXPECT_EQ(ledger.version, kLedgerVersion);
        EXPECT_EQ(ledger.ndevices, 0u);
        EXPECT_EQ(live_grants(ledger), 0u);
    });
}

TEST(LocalLedger, ChangesPersistBetweenCalls)
{
    LocalLedger local;
    uint64_t grant = 0;
    local.with_ledger([&](Ledger &ledger) { grant = place_on(ledger, "test:0", 1000, 1); });
    ASSERT_NE(grant, 0u);
    local.with_ledger([&](Ledger &ledger) {
        ASSERT_EQ(ledger.ndevices, 1u);
        EXPECT_EQ(ledger.devices[0].reserved_bytes, 1000u);
        EXPECT_EQ(ledger.devices[0].tasks, 1u);
        EXPECT_TRUE(ledger_release(ledger, grant));
    });
    local.with_ledger([&](Ledger &ledger) {
        EXPECT_EQ(ledger.devices[0].reserved_bytes, 0u);
        EXPECT_EQ(live_grants(ledger), 0u);
    });
}

TEST(LocalLedger, ExceptionInFnIsContainedAndCountersRebuilt)
{
    LocalLedger local;
    EXPECT_NO_THROW(local.with_ledger([](Ledger &ledger) {
        ASSERT_NE(place_on(ledger, "test:0", 4096, 1), 0u);
        ledger.devices[0].reserved_bytes = 123;  // a half-done update...
        throw std::runtime_error("fn failed");   // ...interrupted
    }));
    // The lock was released (no deadlock) and the counters agree with the grants again.
    local.with_ledger([](Ledger &ledger) { EXPECT_EQ(ledger.devices[0].reserved_bytes, 4096u); });
}

TEST(LocalLedger, ThreadsSerialise)
{
    LocalLedger local;
    local.with_ledger([](Ledger &ledger) { ASSERT_GE(ledger_add_device(ledger, "test:0", test::small_gpu()), 0); });
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&local, t] {
            for (int i = 0; i < 200; ++i) {
                uint64_t grant = 0;
                local.with_ledger([&](Ledger &ledger) { grant = place_on(ledger, "test:0", 100, 10 + t); });
                local.with_ledger([&](Ledger &ledger) { ledger_release(ledger, grant); });
            }
        });
    for (auto &th : threads)
        th.join();
    local.with_ledger([](Ledger &ledger) {
        EXPECT_EQ(ledger.devices[0].reserved_bytes, 0u);
        EXPECT_EQ(ledger.devices[0].in_use_warps, 0u);
        EXPECT_EQ(live_grants(ledger), 0u);
    });
}

}  // namespace
}  // namespace hetpu::mgb
