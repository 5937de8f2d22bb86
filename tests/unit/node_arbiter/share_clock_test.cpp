// SPDX-License-Identifier: LGPL-2.1-or-later
// The arbiter's share clock integrates the Ledger between locks (times given here,
// so nothing depends on the machine's speed) and hands the leaving process its share.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "tests/unit/node_arbiter/arbiter_test_util.h"
#include "node_arbiter/share_clock.h"

using namespace hetpu::mgb;
using namespace hetpu::mgb::test;

namespace {

constexpr uint64_t kSec = 1000000000ull;
const int32_t kSelf = int32_t(getpid());

struct Fixture {
    std::unique_ptr<Ledger> ledger = std::make_unique<Ledger>();
    std::unique_ptr<ShareClock> clock = std::make_unique<ShareClock>();
    Fixture()
    {
        ledger_init(*ledger);
        *clock = ShareClock{};
    }
};

ShareSnapshot::Device device_of(const ShareClock &clock, const Ledger &ledger, int32_t pid)
{
    const auto s = share_clock_snapshot(clock, ledger, pid);
    EXPECT_TRUE(s.has_value()) << "pid " << pid << " has no account";
    if (!s || s->devices.empty())
        return {};
    return s->devices[0];
}

}  // namespace

TEST(ShareClock, TwoProcessesSharingADeviceSplitItAndTheirWeightsAddUp)
{
    Fixture f;
    Ledger &l = *f.ledger;
    ASSERT_EQ(ledger_attach_process(l, 101, "mgb"), 0);
    ASSERT_EQ(ledger_attach_process(l, 102, "mgb"), 0);
    share_clock_advance(*f.clock, l, 1 * kSec);  // starts the clock
    // 101 reserves a quarter of the 1 GiB device for 10 s; 102 another quarter from 4 s on.
    ASSERT_NE(place_on(l, "test:0", uint64_t(1) << 28, 101), 0u);
    share_clock_advance(*f.clock, l, 5 * kSec);
    ASSERT_NE(place_on(l, "test:0", uint64_t(1) << 28, 102), 0u);
    share_clock_advance(*f.clock, l, 11 * kSec);
    const auto a = device_of(*f.clock, l, 101), b = device_of(*f.clock, l, 102);
    EXPECT_EQ(a.key, "test:0");
    // [1,5): 101 alone holds: all of the device. [5,11): equal reservations: half each.
    EXPECT_NEAR(a.weight_s, 4 + 3, 1e-9);
    EXPECT_NEAR(b.weight_s, 3, 1e-9);
    EXPECT_NEAR(a.share_s, 0.25 * 10, 1e-9);  // memory-bound (2 blocks of 2 warps: tiny)
    EXPECT_NEAR(b.attached_s, 6, 1e-9);       // attached from its first grant
    EXPECT_EQ(a.peers, 1u);
}

TEST(ShareClock, AKilledProcessIsChargedUntilItsDeathIsNoticedAndThenForgotten)
{
    Fixture f;
    Ledger &l = *f.ledger;
    ASSERT_EQ(ledger_attach_process(l, 201, "mgb"), 0);
    ASSERT_EQ(ledger_attach_process(l, 202, "mgb"), 0);
    share_clock_advance(*f.clock, l, 0 + 1);
    ASSERT_NE(place_on(l, "test:0", uint64_t(1) << 28, 201), 0u);
    ASSERT_NE(place_on(l, "test:0", uint64_t(1) << 28, 202), 0u);
    share_clock_advance(*f.clock, l, 4 * kSec + 1);
    // 202 was SIGKILLed; the next locker advances the clock, then reclaims it.
    ledger_reclaim_dead(l, [](int32_t pid) { return pid != 202; });
    share_clock_advance(*f.clock, l, 10 * kSec + 1);
    EXPECT_FALSE(share_clock_snapshot(*f.clock, l, 202).has_value());  // no account left
    const auto a = device_of(*f.clock, l, 201);
    EXPECT_NEAR(a.weight_s, 2 + 6, 1e-9);  // half while 202 held, all after
}

TEST(ShareClock, TheLeavingProcessKeepsItsShareForTheAccountingHook)
{
    ScopedSegmentName name;
    auto arbiter = NodeArbiter::open(name.str(), "mgb");
    ASSERT_NE(arbiter, nullptr);
    EXPECT_FALSE(own_share().has_value());
    arbiter->with_ledger([](Ledger &ledger) { ASSERT_NE(place_on(ledger, "test:7", 1 << 20, kSelf), 0u); });
    arbiter->with_ledger([](Ledger &) {});  // some time passes under the grant
    arbiter.reset();
    const auto s = own_share();
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->pid, kSelf);
    EXPECT_EQ(s->policy, "mgb");
    ASSERT_EQ(s->devices.size(), 1u);
    EXPECT_EQ(s->devices[0].key, "test:7");
    EXPECT_GT(s->devices[0].attached_s, 0);
    EXPECT_DOUBLE_EQ(s->devices[0].weight_s, s->devices[0].attached_s);  // alone: all of it
    EXPECT_EQ(s->devices[0].peers, 0u);
    // A new session starts from nothing.
    auto again = NodeArbiter::open(name.str(), "mgb");
    EXPECT_FALSE(own_share().has_value());
}

TEST(ShareClock, EveryAdvanceReadsTheCounterAndTheSharersPartsAddUpToIt)
{
    Fixture f;
    Ledger &l = *f.ledger;
    double counter = 7000;  // joules; the test moves it as the device would
    set_device_energy_reader([&counter](const char *key) -> std::optional<double> {
        return std::string(key) == "test:0" ? std::optional<double>(counter) : std::nullopt;
    });
    ASSERT_EQ(ledger_attach_process(l, 301, "mgb"), 0);
    ASSERT_EQ(ledger_attach_process(l, 302, "mgb"), 0);
    share_clock_advance(*f.clock, l, 1 * kSec);
    ASSERT_NE(place_on(l, "test:0", uint64_t(1) << 28, 301), 0u);  // 301 from 1 s
    counter += 500;
    share_clock_advance(*f.clock, l, 2 * kSec);  // the first reading of test:0: only a start
    counter += 300;                              // 301 alone: all of it
    share_clock_advance(*f.clock, l, 3 * kSec);
    ASSERT_NE(place_on(l, "test:0", uint64_t(3) << 28, 302), 0u);  // 302 from 3 s, three times as much
    counter += 1000;                                               // a power peak while both hold
    share_clock_advance(*f.clock, l, 5 * kSec);
    ledger_reclaim_dead(l, [](int32_t pid) { return pid != 302; });  // 302 killed, noticed at 5 s
    counter += 100;
    share_clock_advance(*f.clock, l, 6 * kSec);
    set_device_energy_reader({});
    counter += 9999;  // no reader: nothing is split
    share_clock_advance(*f.clock, l, 7 * kSec);
    const auto a = device_of(*f.clock, l, 301);
    // 301: 300 alone, a quarter of 1000 (weights 0.25 / 0.75 by reservation), 100 alone.
    EXPECT_NEAR(a.joules, 300 + 250 + 100, 1e-9);
    EXPECT_EQ(a.segments, 3u);
    EXPECT_DOUBLE_EQ(a.from_j, 7500);
    EXPECT_DOUBLE_EQ(a.to_j, 8900);
    // 302's 750 J was its own: killed, it leaves no row, and 301 is not charged it. All
    // parts together make up the device's 1400 J from 301's first reading to its last.
    EXPECT_FALSE(share_clock_snapshot(*f.clock, l, 302).has_value());
    EXPECT_NEAR(a.joules + 750, a.to_j - a.from_j, 1e-9);
}
