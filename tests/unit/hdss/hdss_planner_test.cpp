// SPDX-License-Identifier: LGPL-2.1-or-later
// HDSS baseline (Belviranli et al., as the PLB-HAC paper implements it): adaptive phase of
// doubling blocks, one synchronisation, least-squares weights, decreasing weighted
// completion blocks. Scripted measurements, no StarPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sched_policies/hdss/core/hdss_planner.h"
#include "tools/sim/simulator.h"

using namespace hetpu;

namespace {

std::vector<PlannerWorker> workers(int n)
{
    std::vector<PlannerWorker> w;
    for (int i = 0; i < n; ++i)
        w.push_back({i, WorkerKind::Cpu, "pu" + std::to_string(i)});
    return w;
}

BlockDone done(int worker, uint64_t count, double seconds) { return BlockDone{worker, 0, count, seconds, 0.0, 0.0}; }

// time = latency + x / rate
double linear_time(double latency, double rate, uint64_t x) { return latency + static_cast<double>(x) / rate; }

}  // namespace

TEST(HdssLeastSquares, ExactThroughputDespiteLatency)
{
    const double latency = 0.05, rate = 5e4;
    std::vector<double> sizes{1000, 2000, 4000}, times;
    for (double x : sizes)
        times.push_back(latency + x / rate);
    EXPECT_NEAR(least_squares_throughput(sizes, times), rate, 1e-6 * rate);
    // total size / total time would be biased low by the latency:
    EXPECT_LT(7000 / (times[0] + times[1] + times[2]), 0.8 * rate);
}

TEST(HdssLeastSquares, DegenerateFitsFallBackToMeanRate)
{
    EXPECT_DOUBLE_EQ(least_squares_throughput({1000}, {0.5}), 2000.0) << "one sample";
    EXPECT_DOUBLE_EQ(least_squares_throughput({1000, 1000}, {0.5, 1.5}), 1000.0) << "one distinct size";
    EXPECT_DOUBLE_EQ(least_squares_throughput({1000, 2000}, {1.0, 0.5}), 2000.0) << "negative slope";
    EXPECT_DOUBLE_EQ(least_squares_throughput({}, {}), 0.0);
}

TEST(HdssPlanner, AdaptiveBlocksDoubleOneAtATimeThenSynchronise)
{
    HdssOptions o;
    o.x_init = 1024;
    HdssPlanner p(workers(2), BlockRules{10'000'000, 64, 64}, o);
    const uint64_t rem = 10'000'000;
    // Fast PU 0 (latency 10 ms, 100k/s), slow PU 1 (latency 20 ms, 10k/s).
    EXPECT_EQ(p.next_block(0, rem), 1024u);
    EXPECT_EQ(p.next_block(0, rem), 0u) << "one adaptive block at a time";
    EXPECT_EQ(p.next_block(1, rem), 1024u);
    p.block_done(done(0, 1024, linear_time(0.01, 1e5, 1024)));
    EXPECT_EQ(p.next_block(0, rem), 2048u);
    EXPECT_EQ(p.next_block(0, rem), 0u);
    p.block_done(done(0, 2048, linear_time(0.01, 1e5, 2048)));
    EXPECT_EQ(p.next_block(0, rem), 4096u);
    p.block_done(done(0, 4096, linear_time(0.01, 1e5, 4096)));
    // PU 0 is through its adaptive phase; it waits for PU 1 (HDSS's synchronisation).
    EXPECT_FALSE(p.adapted());
    EXPECT_EQ(p.next_block(0, rem), 0u);
    p.block_done(done(1, 1024, linear_time(0.02, 1e4, 1024)));
    EXPECT_EQ(p.next_block(0, rem), 0u);
    EXPECT_EQ(p.next_block(1, rem), 2048u);
    p.block_done(done(1, 2048, linear_time(0.02, 1e4, 2048)));
    EXPECT_EQ(p.next_block(1, rem), 4096u);
    EXPECT_EQ(p.next_block(0, rem), 0u);
    p.block_done(done(1, 4096, linear_time(0.02, 1e4, 4096)));
    ASSERT_TRUE(p.adapted());
    ASSERT_EQ(p.weights().size(), 2u);
    EXPECT_NEAR(p.weights()[0], 1e5, 1e-6 * 1e5) << "least-squares throughput, latency excluded";
    EXPECT_NEAR(p.weights()[1], 1e4, 1e-6 * 1e4);
}

TEST(HdssPlanner, CompletionBlocksProportionalToWeightsAndDecreasing)
{
    HdssOptions o;
    o.x_init = 1024;
    o.adaptive_blocks = 2;
    HdssPlanner p(workers(2), BlockRules{10'000'000, 64, 64}, o);
    const uint64_t rem = 10'000'000;
    for (int k = 0; k < 2; ++k)
        for (int w = 0; w < 2; ++w) {
            const uint64_t x = p.next_block(w, rem);
            ASSERT_EQ(x, 1024u << k);
            p.block_done(done(w, x, linear_time(0.01, w == 0 ? 3e4 : 1e4, x)));
        }
    ASSERT_TRUE(p.adapted());
    // Same remainder: sizes in the ratio of the weights (3:1), together half of it.
    const uint64_t a = p.next_block(0, 1'000'000), b = p.next_block(1, 1'000'000);
    EXPECT_NEAR(static_cast<double>(a) / b, 3.0, 0.01);
    EXPECT_NEAR(static_cast<double>(a + b), 500'000, 128);
    EXPECT_EQ(a % 64 + b % 64, 0u);
    // Decreasing as the remainder shrinks (guided self-scheduling), floored at min_block.
    uint64_t left = rem, prev = UINT64_MAX;
    for (int i = 0; i < 40 && left > 0; ++i) {
        const uint64_t x = std::min(p.next_block(0, left), left);
        EXPECT_LE(x, prev);
        EXPECT_GE(x, std::min<uint64_t>(64, left));
        prev = x;
        left -= x;
    }
}

TEST(HdssPlanner, SimulatedRunCompletesWithDecreasingBlocks)
{
    sim::Scenario s;
    s.workload = 1'000'000;
    s.granule = 64;
    s.x_init = 2048;
    for (int i = 0; i < 3; ++i) {
        sim::UnitSpec u;
        u.name = "u" + std::to_string(i) + ".cpu";
        u.unit_class = "cpu";
        const double rate = 1e4 * (1 << i);
        u.profile = {{1024, 0.005 + 1024 / rate}, {1 << 20, 0.005 + (1 << 20) / rate}};
        s.units.push_back(u);
    }
    HdssOptions o;
    o.x_init = s.x_init;
    HdssPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
    const sim::SimResult r = sim::simulate(s, p, {1, false});
    EXPECT_FALSE(r.forced_remainder);
    uint64_t total = 0;
    for (const auto &u : r.units)
        total += u.elements;
    EXPECT_EQ(total, s.workload);
    // Weights ~ 1:2:4 (noise-free, latency fitted away).
    ASSERT_EQ(p.weights().size(), 3u);
    EXPECT_NEAR(p.weights()[1] / p.weights()[0], 2.0, 0.01);
    EXPECT_NEAR(p.weights()[2] / p.weights()[0], 4.0, 0.01);
    // Per unit: adaptive blocks x, 2x, 4x, then completion blocks that never grow.
    for (int u = 0; u < 3; ++u) {
        std::vector<uint64_t> sizes;
        for (const auto &b : r.trace)
            if (b.unit == u)
                sizes.push_back(b.count);
        ASSERT_GE(sizes.size(), 5u);
        EXPECT_EQ(sizes[0], 2048u);
        EXPECT_EQ(sizes[1], 4096u);
        EXPECT_EQ(sizes[2], 8192u);
        for (size_t i = 4; i + 1 < sizes.size(); ++i)  // the last may absorb a remainder
            EXPECT_LE(sizes[i], sizes[i - 1]) << "unit " << u << " block " << i;
    }
}
