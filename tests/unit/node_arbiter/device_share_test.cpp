// SPDX-License-Identifier: LGPL-2.1-or-later
// The share integral of a shared device (overlapping grants, processes joining and
// leaving, memory-bound and warp-bound shares) and the split of its energy.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

#include "node_arbiter/core/device_share.h"
#include "tests/unit/thrown_message.h"

using namespace hetpu::accounting;
using hetpu::test::thrown_message;

namespace {

constexpr uint64_t kCap = 100;     // bytes
constexpr uint64_t kWarps = 1000;  // warp capacity
const std::string kDev = "opencl:0:0";

ShareIntegrator one_device()
{
    ShareIntegrator s;
    s.add_device(kDev, kCap, kWarps);
    return s;
}

double sum_weight_s(const ShareIntegrator &s, std::initializer_list<int32_t> pids)
{
    double sum = 0;
    for (int32_t p : pids)
        sum += s.of(p, kDev).weight_s;
    return sum;
}

}  // namespace

TEST(DeviceShare, AloneWithAFullReservationIsChargedTheWholeDeviceAsBefore)
{
    ShareIntegrator s = one_device();
    s.attach(0, 1, kDev);
    s.grant(0, 1, kDev, kCap, 0);
    s.release(10, 1, kDev, kCap, 0);
    s.detach(10, 1, kDev);
    const ShareTime t = s.of(1, kDev);
    EXPECT_DOUBLE_EQ(t.attached_s, 10);
    EXPECT_DOUBLE_EQ(t.share_s, 10);
    EXPECT_DOUBLE_EQ(t.weight_s, 10);
    EXPECT_DOUBLE_EQ(mean_weight(t), 1);  // today's fraction: the whole device
}

TEST(DeviceShare, AloneWithASmallReservationUsesLittleButPaysTheIdleRest)
{
    ShareIntegrator s = one_device();
    s.attach(0, 1, kDev);
    s.grant(2, 1, kDev, 10, 50);  // 10% of memory, 5% of warps: memory-bound share 0.1
    s.release(6, 1, kDev, 10, 50);
    s.advance(10);
    const ShareTime t = s.of(1, kDev);
    EXPECT_DOUBLE_EQ(t.share_s, 0.4);    // 0.1 x 4 s
    EXPECT_DOUBLE_EQ(t.weight_s, 10.0);  // nobody else: the idle device is its own
}

TEST(DeviceShare, OverlappingMemoryBoundGrantsSplitTheIdleRestByReservation)
{
    ShareIntegrator s = one_device();
    s.attach(0, 1, kDev);
    s.attach(0, 2, kDev);
    s.grant(0, 1, kDev, 30, 10);  // A: share 0.3 (memory-bound)
    s.grant(5, 2, kDev, 20, 10);  // B: share 0.2 from 5 s
    s.release(10, 1, kDev, 30, 10);
    s.release(15, 2, kDev, 20, 10);
    // [0,5): A holds 0.3, B nothing: the idle 0.7 goes by reservation, all to A -> A 1, B 0.
    // [5,10): 0.3 + 0.2, idle 0.5 split 30:20 -> A 0.6, B 0.4.
    // [10,15): B alone holds -> B 1.
    const ShareTime a = s.of(1, kDev), b = s.of(2, kDev);
    EXPECT_NEAR(a.share_s, 3.0, 1e-12);
    EXPECT_NEAR(b.share_s, 2.0, 1e-12);
    EXPECT_NEAR(a.weight_s, 5 + 3.0, 1e-12);
    EXPECT_NEAR(b.weight_s, 2.0 + 5, 1e-12);
    EXPECT_NEAR(a.weight_s + b.weight_s, s.device_attached_s(kDev), 1e-12);  // adds up to the device
}

TEST(DeviceShare, WarpBoundSharesBeatMemoryAndOversubscriptionIsNormalised)
{
    HoldWeight w[2];
    const DeviceHold holds[2] = {{1, 10, 800}, {2, 10, 400}};  // warps 0.8 and 0.4 > memory 0.1
    device_weights(kCap, kWarps, holds, 2, w);
    EXPECT_DOUBLE_EQ(w[0].share, 0.8);
    EXPECT_DOUBLE_EQ(w[1].share, 0.4);
    EXPECT_NEAR(w[0].weight, 0.8 / 1.2, 1e-15);
    EXPECT_NEAR(w[1].weight, 0.4 / 1.2, 1e-15);

    // Memory-bound against warp-bound, below full: idle by reservation (equal bytes here).
    const DeviceHold mixed[2] = {{1, 50, 0}, {2, 10, 300}};  // 0.5 memory; 0.3 warps
    device_weights(kCap, kWarps, mixed, 2, w);
    EXPECT_DOUBLE_EQ(w[0].share, 0.5);
    EXPECT_DOUBLE_EQ(w[1].share, 0.3);
    EXPECT_NEAR(w[0].weight, 0.5 + 0.2 * 50 / 60, 1e-15);
    EXPECT_NEAR(w[1].weight, 0.3 + 0.2 * 10 / 60, 1e-15);
}

TEST(DeviceShare, ProcessesJoiningAndLeavingAnIdleDeviceSplitItEvenly)
{
    ShareIntegrator s = one_device();
    s.attach(0, 1, kDev);
    s.attach(2, 2, kDev);
    s.attach(4, 3, kDev);
    s.detach(6, 1, kDev);
    s.detach(8, 2, kDev);
    s.detach(10, 3, kDev);
    s.advance(12);  // nobody attached: nobody pays, the device is not counted
    EXPECT_NEAR(s.of(1, kDev).weight_s, 2 + 1 + 2.0 / 3, 1e-12);
    EXPECT_NEAR(s.of(2, kDev).weight_s, 1 + 2.0 / 3 + 1, 1e-12);
    EXPECT_NEAR(s.of(3, kDev).weight_s, 2.0 / 3 + 1 + 2, 1e-12);
    EXPECT_DOUBLE_EQ(s.device_attached_s(kDev), 10);
    EXPECT_NEAR(sum_weight_s(s, {1, 2, 3}), 10, 1e-12);
    EXPECT_DOUBLE_EQ(s.of(1, kDev).share_s, 0);
}

TEST(DeviceShare, AKilledProcessKeepsItsShareUntilItsDeathIsNoticed)
{
    ShareIntegrator s = one_device();
    s.attach(0, 1, kDev);
    s.attach(0, 2, kDev);
    s.grant(0, 1, kDev, 50, 0);
    s.grant(0, 2, kDev, 50, 0);
    // Process 2 is SIGKILLed; the arbiter reclaims it at 4 s: a detach with its grant held.
    s.detach(4, 2, kDev);
    s.advance(10);
    EXPECT_NEAR(s.of(2, kDev).weight_s, 2.0, 1e-12);  // half the device for 4 s
    EXPECT_NEAR(s.of(1, kDev).weight_s, 2.0 + 6, 1e-12);
    EXPECT_NEAR(sum_weight_s(s, {1, 2}), s.device_attached_s(kDev), 1e-12);
}

TEST(DeviceShare, WeightsOfRandomHoldsAlwaysSumToOne)
{
    std::mt19937_64 rng(49);
    std::uniform_int_distribution<uint64_t> bytes(0, kCap / 2), warps(0, kWarps);
    for (int trial = 0; trial < 2000; ++trial) {
        const size_t n = 1 + trial % 6;
        DeviceHold h[6];
        HoldWeight w[6];
        for (size_t i = 0; i < n; ++i)
            h[i] = {int32_t(i + 1), trial % 7 == 0 ? 0 : bytes(rng), trial % 5 == 0 ? 0 : warps(rng)};
        device_weights(kCap, kWarps, h, n, w);
        double sum = 0;
        for (size_t i = 0; i < n; ++i) {
            ASSERT_GE(w[i].weight, 0);
            ASSERT_LE(w[i].share, 1);
            sum += w[i].weight;
        }
        ASSERT_NEAR(sum, 1.0, 1e-12) << "trial " << trial;
    }
}

TEST(DeviceShare, EnergySplitAddsUpToTheDeviceTotal)
{
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> w(0, 1e4), j(1, 1e7);
    for (int trial = 0; trial < 500; ++trial) {
        std::vector<double> weights(1 + trial % 10);
        for (double &x : weights)
            x = w(rng);
        const double joules = j(rng);
        const std::vector<double> parts = split_energy(joules, weights);
        const double sum = std::accumulate(parts.begin(), parts.end(), 0.0);
        ASSERT_LE(std::fabs(sum - joules), 1e-9 * joules) << "trial " << trial;
    }
    // Share-times of an event log, split: 2/3 and 1/3 of 90 J.
    const std::vector<double> parts = split_energy(90, {8, 4});
    EXPECT_NEAR(parts[0], 60, 1e-12);
    EXPECT_NEAR(parts[1], 30, 1e-12);
    // Nobody used it: evenly.
    const std::vector<double> even = split_energy(90, {0, 0, 0});
    EXPECT_DOUBLE_EQ(even[2], 30);
}

TEST(DeviceShare, OwnViewOfTheDeviceEnergyIsTheMeanWeight)
{
    EXPECT_DOUBLE_EQ(own_device_joules(100, ShareTime{10, 1, 10}), 100);  // alone: all of it
    EXPECT_DOUBLE_EQ(own_device_joules(100, ShareTime{10, 1, 2.5}), 25);
    EXPECT_DOUBLE_EQ(own_device_joules(100, ShareTime{}), 0);
}

TEST(DeviceShare, BadInputIsNamed)
{
    ShareIntegrator s = one_device();
    EXPECT_NE(
        thrown_message<std::invalid_argument>([&] { s.attach(0, 1, "cuda:nope"); }).find("unknown device 'cuda:nope'"),
        std::string::npos);
    EXPECT_NE(thrown_message<std::invalid_argument>([&] { s.grant(0, 1, kDev, 1, 1); }).find("not attached"),
              std::string::npos);
    s.attach(5, 1, kDev);
    EXPECT_NE(thrown_message<std::invalid_argument>([&] { s.release(6, 1, kDev, 1, 0); }).find("releases more"),
              std::string::npos);
    EXPECT_NE(thrown_message<std::invalid_argument>([&] { s.advance(4); }).find("sort the log by time"),
              std::string::npos);
    EXPECT_NE(thrown_message<std::invalid_argument>([&] { s.add_device("x", 0, 1); }).find("capacity 0"),
              std::string::npos);
    EXPECT_NE(thrown_message<std::invalid_argument>([] { split_energy(1, {}); }).find("no process"), std::string::npos);
    EXPECT_NE(thrown_message<std::invalid_argument>([] { split_energy(-1, {1}); }).find(">= 0"), std::string::npos);
    EXPECT_NE(thrown_message<std::invalid_argument>([] { split_energy(1, {-1}); }).find("negative"), std::string::npos);
}
