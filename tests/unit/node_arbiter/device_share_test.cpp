// SPDX-License-Identifier: LGPL-2.1-or-later
// The share integral of a shared device (overlapping grants, processes joining and
// leaving, memory-bound and warp-bound shares) and the split of its energy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

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

TEST(DeviceShare, OwnViewOfTheDeviceEnergyIsItsWeightSecondsAtTheMeanPower)
{
    EXPECT_DOUBLE_EQ(own_device_joules(100, 10, ShareTime{10, 1, 10}), 100);  // alone all along: all of it
    EXPECT_DOUBLE_EQ(own_device_joules(100, 10, ShareTime{10, 1, 2.5}), 25);
    EXPECT_DOUBLE_EQ(own_device_joules(100, 10, ShareTime{}), 0);
    // Attached for 4 s of a 10 s run: outside the arbiter its weight is 0.
    EXPECT_DOUBLE_EQ(own_device_joules(100, 10, ShareTime{4, 1, 4}), 40);
    EXPECT_DOUBLE_EQ(own_device_joules(100, 0, ShareTime{4, 1, 4}), 0);
}

// ---- the energy split at the device counter's readings -----------------------------------

namespace {

// A device whose power rises over time (100 W + 40 W/s): its counter is the exact integral,
// so any split that assumed a uniform power per process would not add up.
double counter_j(double t) { return 5000 + 100 * t + 20 * t * t; }

// Every event reads the counter first, as every lock of the arbiter does.
struct Log {
    ShareIntegrator s = one_device();
    void at(double t) { s.reading(t, kDev, counter_j(t)); }
    void attach(double t, int32_t pid) { at(t), s.attach(t, pid, kDev); }
    void detach(double t, int32_t pid) { at(t), s.detach(t, pid, kDev); }
    void grant(double t, int32_t pid, uint64_t bytes, uint64_t warps) { at(t), s.grant(t, pid, kDev, bytes, warps); }
    void release(double t, int32_t pid, uint64_t bytes, uint64_t warps)
    {
        at(t), s.release(t, pid, kDev, bytes, warps);
    }
};

// The device's joules over the union of the processes' charged intervals, from their
// counter bounds alone (the counter only rises: an interval of it is an interval of time).
double union_joules(std::vector<std::pair<double, double>> intervals)
{
    std::sort(intervals.begin(), intervals.end());
    double sum = 0, start = 0, end = -1;
    for (const auto &[a, b] : intervals) {
        if (a > end) {
            sum += std::max(0.0, end - start);
            start = a;
        }
        end = std::max(end, b);
    }
    return sum + std::max(0.0, end - start);
}

double sum_and_union(const ShareIntegrator &s, std::initializer_list<int32_t> pids, double *union_j)
{
    double sum = 0;
    std::vector<std::pair<double, double>> intervals;
    for (int32_t p : pids) {
        const ShareEnergy e = s.energy_of(p, kDev);
        sum += e.joules;
        if (e.segments > 0)
            intervals.emplace_back(e.from_j, e.to_j);
    }
    *union_j = union_joules(intervals);
    return sum;
}

}  // namespace

TEST(DeviceShare, StaggeredStartsUnequalMemoryAndAKillAddUpToTheDeviceExactly)
{
    Log l;
    l.attach(1, 1);  // A from 1 s, 30% of memory
    l.grant(1.5, 1, 30, 0);
    l.attach(3, 2);  // B from 3 s, 60%
    l.grant(3.2, 2, 60, 100);
    l.attach(4, 3);  // C attached, holding nothing: it pays only for idle time
    l.release(5, 1, 30, 0);
    l.grant(6, 1, 10, 900);  // A warp-bound
    l.detach(7.25, 2);       // B killed at 6.5 s, reclaimed by the next lock at 7.25 s
    l.detach(8, 1);
    l.detach(10, 3);
    l.at(12);         // nobody from 10 to 13: nobody's
    l.attach(13, 4);  // D alone, later
    l.grant(13.5, 4, 5, 0);
    l.detach(15, 4);
    // Process 5 never attached: nothing, and no interval.
    EXPECT_EQ(l.s.energy_of(5, kDev).segments, 0u);
    double union_j = 0;
    const double sum = sum_and_union(l.s, {1, 2, 3, 4, 5}, &union_j);
    const double device_j = (counter_j(10) - counter_j(1)) + (counter_j(15) - counter_j(13));
    EXPECT_NEAR(union_j, device_j, 1e-9 * device_j);
    EXPECT_NEAR(sum, device_j, 1e-9 * device_j);
    // Each interval runs from its attach to its detach.
    EXPECT_DOUBLE_EQ(l.s.energy_of(1, kDev).from_j, counter_j(1));
    EXPECT_DOUBLE_EQ(l.s.energy_of(2, kDev).to_j, counter_j(7.25));
    EXPECT_DOUBLE_EQ(l.s.energy_of(4, kDev).joules, counter_j(15) - counter_j(13));  // alone: all of it
    // Before B came, A had the device alone: [1, 3) is all A's, whatever it reserved.
    EXPECT_GT(l.s.energy_of(1, kDev).joules, counter_j(3) - counter_j(1));
}

TEST(DeviceShare, TheMeanWeightOverTheRunDoesNotAddUpButTheSplitDoes)
{
    // A runs 0-10 s but attaches only at 4; B runs and is attached 0-10. Constant 100 W.
    ShareIntegrator s = one_device();
    auto read = [&](double t) { s.reading(t, kDev, 100 * t); };
    read(0), s.attach(0, 2, kDev), s.grant(0, 2, kDev, 50, 0);
    read(4), s.attach(4, 1, kDev), s.grant(4, 1, kDev, 50, 0);
    read(10), s.detach(10, 1, kDev), s.detach(10, 2, kDev);
    const ShareTime a = s.of(1, kDev), b = s.of(2, kDev);
    // Each mean weight while attached applied to its whole run (1000 J each): 0.5 x 1000 +
    // (4 + 3) / 10 x 1000 = 1200 J of a device that drew 1000 J.
    EXPECT_NEAR(mean_weight(a) * 1000 + mean_weight(b) * 1000, 1200, 1e-9);
    // Split at the readings: B 400 + 300, A 300.
    EXPECT_NEAR(s.energy_of(1, kDev).joules, 300, 1e-9);
    EXPECT_NEAR(s.energy_of(2, kDev).joules, 700, 1e-9);
    // Without shared readings, each process's weight-seconds at its run's mean power: the
    // same 300 and 700 (the power is uniform here).
    EXPECT_NEAR(own_device_joules(1000, 10, a) + own_device_joules(1000, 10, b), 1000, 1e-9);
}

TEST(DeviceShare, ASegmentPartlyNobodysIsSplitByTimeAndReadingsNeedNotFollowEvents)
{
    ShareIntegrator s = one_device();
    s.reading(0, kDev, 0);
    s.attach(0, 1, kDev);
    s.detach(5, 1, kDev);       // no reading here: the next one closes the segment
    s.reading(10, kDev, 1000);  // half of the segment was A's: half of its joules
    EXPECT_NEAR(s.energy_of(1, kDev).joules, 500, 1e-9);
    // A counter that went back (a driver reload) splits nothing and starts afresh.
    s.attach(10, 1, kDev);
    s.reading(12, kDev, 10);
    EXPECT_NEAR(s.energy_of(1, kDev).joules, 500, 1e-9);
    s.reading(14, kDev, 210);
    EXPECT_NEAR(s.energy_of(1, kDev).joules, 700, 1e-9);
    EXPECT_NE(thrown_message<std::invalid_argument>([&] { s.reading(15, kDev, std::nan("")); }).find("finite"),
              std::string::npos);
}

TEST(DeviceShare, RandomOverlapsAlwaysAddUpToTheUnionOfTheChargedIntervals)
{
    std::mt19937_64 rng(49);
    for (int trial = 0; trial < 300; ++trial) {
        Log l;
        const int n = 1 + trial % 7;
        std::vector<int> state(size_t(n) + 1, 0);  // 0 never attached, 1 attached, 2 gone
        std::vector<uint64_t> held(size_t(n) + 1, 0);
        double t = 0;
        for (int step = 0; step < 60; ++step) {
            t += std::uniform_real_distribution<double>(0, 2)(rng);
            const int32_t p = 1 + int32_t(rng() % uint64_t(n));
            const int what = int(rng() % 4);
            if (state[size_t(p)] == 0) {
                l.attach(t, p);
                state[size_t(p)] = 1;
            } else if (state[size_t(p)] == 1 && what == 0) {
                l.detach(t, p);  // leaves, or is killed and reclaimed: the same to the split
                state[size_t(p)] = 2;
                held[size_t(p)] = 0;
            } else if (state[size_t(p)] == 1 && what == 1 && held[size_t(p)] > 0) {
                l.release(t, p, held[size_t(p)], 0);
                held[size_t(p)] = 0;
            } else if (state[size_t(p)] == 1) {
                const uint64_t b = rng() % 40;
                l.grant(t, p, b, rng() % 500);
                held[size_t(p)] += b;
            } else {
                l.at(t);  // another process's lock
            }
        }
        l.at(t + 1);
        double sum = 0;
        std::vector<std::pair<double, double>> intervals;
        for (int32_t p = 1; p <= n; ++p) {
            const ShareEnergy e = l.s.energy_of(p, kDev);
            sum += e.joules;
            if (e.segments > 0)
                intervals.emplace_back(e.from_j, e.to_j);
        }
        const double device_j = union_joules(intervals);
        ASSERT_NEAR(sum, device_j, 1e-9 * device_j) << "trial " << trial;
    }
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
