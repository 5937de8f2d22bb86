// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/peer_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>

using namespace hetpu::ckpt;

namespace {

// Seed slide 46 on an 8-GPU node: GPU 0 and GPU 6 overflow by 480 MB and 240 MB; GPU 1 and
// GPU 4 have spare cache; links GPU0-GPU1 24 GB/s, GPU0-GPU4 48 GB/s, GPU6-GPU4 24 GB/s,
// every GPU to the host 12 GB/s.
PeerProblem seed_example()
{
    PeerProblem p;
    const int n = 8;
    p.remainder.assign(n, 0);
    p.spare.assign(n, 0);
    p.link_bw.assign(n, std::vector<double>(n, 0));
    p.host_bw.assign(n, 12e9);
    p.remainder[0] = 480'000'000;
    p.remainder[6] = 240'000'000;
    p.spare[1] = 200'000'000;
    p.spare[4] = 480'000'000;
    p.link_bw[0][1] = 24e9;
    p.link_bw[0][4] = 48e9;
    p.link_bw[6][4] = 24e9;
    return p;
}

// Every device ships exactly its remainder, over existing links, within peers' spare.
void expect_valid(const PeerProblem &p, const PeerSchedule &s)
{
    ASSERT_TRUE(s.feasible);
    std::vector<std::uint64_t> sent(p.remainder.size(), 0), got(p.remainder.size(), 0);
    std::uint64_t host = 0;
    for (const Transfer &t : s.transfers) {
        sent[t.from] += t.bytes;
        if (t.to == kHost) {
            ASSERT_GT(p.host_bw[t.from], 0);
            host += t.bytes;
        } else {
            ASSERT_GT(p.link_bw[t.from][t.to], 0);
            got[t.to] += t.bytes;
        }
    }
    for (std::size_t i = 0; i < p.remainder.size(); ++i) {
        EXPECT_EQ(sent[i], p.remainder[i]) << "device " << i;
        EXPECT_LE(got[i], p.spare[i]) << "device " << i;
    }
    EXPECT_LE(host, p.host_spare);
    EXPECT_DOUBLE_EQ(s.time, bottleneck_time(p, s.transfers));
}

// Brute force 1: the continuous optimum from every s-t cut of the flow network (max-flow
// min-cut: T* is the largest T at which some cut still caps the flow below the total).
double optimum_by_cut_enumeration(const PeerProblem &p)
{
    const int n = static_cast<int>(p.remainder.size());
    std::vector<int> senders, receivers;
    double F = 0;
    for (int i = 0; i < n; ++i) {
        if (p.remainder[i] > 0) {
            senders.push_back(i);
            F += p.remainder[i];
        } else if (p.spare[i] > 0)
            receivers.push_back(i);
    }
    if (F == 0)
        return 0;
    const int k = static_cast<int>(senders.size() + receivers.size()) + 1;  // + host
    double best = 0;
    for (long mask = 0; mask < (1L << k); ++mask) {
        auto in = [&](int idx) { return (mask >> idx) & 1; };
        const int host_idx = k - 1;
        double a = 0, b = 0;
        for (std::size_t s = 0; s < senders.size(); ++s) {
            const int i = senders[s];
            if (!in(static_cast<int>(s))) {
                a += p.remainder[i];
                continue;
            }
            for (std::size_t r = 0; r < receivers.size(); ++r)
                if (!in(static_cast<int>(senders.size() + r)))
                    b += p.link_bw[i][receivers[r]];
            if (!in(host_idx))
                b += p.host_bw[i];
        }
        for (std::size_t r = 0; r < receivers.size(); ++r)
            if (in(static_cast<int>(senders.size() + r)))
                a += p.spare[receivers[r]];
        if (in(host_idx))
            a += static_cast<double>(p.host_spare);
        if (a >= F)
            continue;
        if (b == 0)
            return INFINITY;
        best = std::max(best, (F - a) / b);
    }
    return best;
}

// Brute force 2: every whole-byte split of every remainder over its links and the host.
double optimum_by_split_enumeration(const PeerProblem &p)
{
    const int n = static_cast<int>(p.remainder.size());
    struct Dest {
        int from, to;
        double bw;
    };
    std::vector<std::vector<Dest>> dests(n);
    for (int i = 0; i < n; ++i) {
        if (p.remainder[i] == 0)
            continue;
        for (int j = 0; j < n; ++j)
            if (j != i && p.link_bw[i][j] > 0 && p.remainder[j] == 0 && p.spare[j] > 0)
                dests[i].push_back({i, j, p.link_bw[i][j]});
        if (p.host_bw[i] > 0)
            dests[i].push_back({i, kHost, p.host_bw[i]});
    }
    double best = INFINITY;
    std::vector<std::uint64_t> got(n, 0);
    std::uint64_t host = 0;
    std::function<void(int, std::size_t, std::uint64_t, double)> rec = [&](int i, std::size_t d, std::uint64_t left,
                                                                           double worst) {
        if (worst >= best)
            return;
        if (i == n) {
            best = worst;
            return;
        }
        if (d == dests[i].size()) {
            if (left == 0)
                rec(i + 1, 0, i + 1 < n ? p.remainder[i + 1] : 0, worst);
            return;
        }
        const Dest &de = dests[i][d];
        for (std::uint64_t x = 0; x <= left; ++x) {
            std::uint64_t &slot = de.to == kHost ? host : got[de.to];
            const std::uint64_t cap = de.to == kHost ? p.host_spare : p.spare[de.to];
            if (slot + x > cap)
                break;
            slot += x;
            rec(i, d + 1, left - x, std::max(worst, x / de.bw));
            slot -= x;
        }
    };
    rec(0, 0, p.remainder[0], 0.0);
    return best;
}

PeerProblem random_problem(std::mt19937 &rng, int n, std::uint64_t max_rem, std::uint64_t max_spare, bool host_limited)
{
    PeerProblem p;
    p.remainder.assign(n, 0);
    p.spare.assign(n, 0);
    p.link_bw.assign(n, std::vector<double>(n, 0));
    p.host_bw.assign(n, 0);
    for (int i = 0; i < n; ++i) {
        if (rng() % 2)
            p.remainder[i] = 1 + rng() % max_rem;
        else
            p.spare[i] = rng() % (max_spare + 1);
        p.host_bw[i] = 1 + rng() % 4;
        for (int j = 0; j < n; ++j)
            if (j != i && rng() % 3)
                p.link_bw[i][j] = 1 + rng() % 8;
    }
    if (host_limited)
        p.host_spare = rng() % (max_rem * n);
    return p;
}

}  // namespace

TEST(PeerSchedule, SeedExampleGreedyTwentyMsFlowSixPointSeven)
{
    const PeerProblem p = seed_example();
    const PeerSchedule greedy = schedule_greedy(p), flow = schedule_min_time_max_flow(p),
                       local = schedule_local_only(p);
    expect_valid(p, greedy);
    expect_valid(p, flow);
    expect_valid(p, local);
    EXPECT_NEAR(greedy.time * 1e3, 20.0, 1e-9);        // GPU 6 -> host: 240 MB at 12 GB/s
    EXPECT_NEAR(flow.time * 1e3, 240.0 / 36.0, 1e-6);  // 6.67 ms: GPU 6 splits 2:1 over GPU 4 and host
    EXPECT_NEAR(local.time * 1e3, 40.0, 1e-9);
    EXPECT_NEAR(min_time_continuous(p) * 1e3, 240.0 / 36.0, 1e-9);
    // The flow uses GPU 4's spare capacity for both overflowing GPUs (greedy gave it all to GPU 0).
    std::uint64_t from6_to4 = 0;
    for (const Transfer &t : flow.transfers)
        if (t.from == 6 && t.to == 4)
            from6_to4 += t.bytes;
    EXPECT_NEAR(static_cast<double>(from6_to4), 160e6, 1.0);
}

TEST(PeerSchedule, ContinuousOptimumMatchesEveryCutOnRandomInstances)
{
    std::mt19937 rng(3);
    for (int trial = 0; trial < 300; ++trial) {
        PeerProblem p = random_problem(rng, 2 + rng() % 5, 1000, 800, trial % 3 == 0);
        const double brute = optimum_by_cut_enumeration(p);
        const double t = min_time_continuous(p);
        if (std::isinf(brute)) {
            EXPECT_TRUE(std::isinf(t));
            continue;
        }
        ASSERT_NEAR(t, brute, 1e-9 * std::max(1.0, brute)) << "trial " << trial;
        PeerSchedule s = schedule_min_time_max_flow(p);
        expect_valid(p, s);
        EXPECT_GE(s.time, brute - 1e-9);
        PeerSchedule g = schedule_greedy(p);
        if (g.feasible) {
            EXPECT_GE(g.time, s.time - 1e-12);
        }
    }
}

TEST(PeerSchedule, WholeByteScheduleEqualsBruteForceOptimum)
{
    std::mt19937 rng(5);
    int compared = 0;
    for (int trial = 0; trial < 400; ++trial) {
        PeerProblem p = random_problem(rng, 2 + rng() % 3, 5, 4, trial % 4 == 0);
        const double brute = optimum_by_split_enumeration(p);
        PeerSchedule s = schedule_min_time_max_flow(p);
        if (std::isinf(brute)) {
            EXPECT_FALSE(s.feasible) << "trial " << trial;
            continue;
        }
        expect_valid(p, s);
        ASSERT_NEAR(s.time, brute, 1e-12) << "trial " << trial;
        PeerSchedule g = schedule_greedy(p), l = schedule_local_only(p);
        if (g.feasible) {
            EXPECT_GE(g.time, brute - 1e-12);
        }
        if (l.feasible) {
            EXPECT_GE(l.time, brute - 1e-12);
        }
        ++compared;
    }
    EXPECT_GT(compared, 300);
}

TEST(PeerSchedule, ShapeErrorsAreNamed)
{
    PeerProblem p = seed_example();
    p.host_bw.pop_back();
    EXPECT_THROW(schedule_min_time_max_flow(p), std::invalid_argument);
}
