// SPDX-License-Identifier: LGPL-2.1-or-later
// The load-balanced distribution against brute force on seeded random small instances.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "sched_policies/pareto/core/load_balanced.h"

using namespace hetpu;

namespace {

struct Brute {
    bool found = false;
    int active = 0;
    double spread = 0, makespan = 0;
};

// Every distribution: most active processors, then least spread, then least makespan.
void enumerate(const std::vector<ProcessorProfile> &ps, std::size_t i, Granules left, int active, double lo, double hi,
               Brute &best)
{
    if (i == ps.size()) {
        if (left != 0 || active == 0)
            return;
        const double spread = hi - lo;
        if (!best.found || active > best.active || (active == best.active && spread < best.spread) ||
            (active == best.active && spread == best.spread && hi < best.makespan))
            best = {true, active, spread, hi};
        return;
    }
    enumerate(ps, i + 1, left, active, lo, hi, best);  // idle
    for (const ProfilePoint &pt : ps[i].points)
        if (pt.size <= left)
            enumerate(ps, i + 1, left - pt.size, active + 1, active ? std::min(lo, pt.time_s) : pt.time_s,
                      active ? std::max(hi, pt.time_s) : pt.time_s, best);
}

}  // namespace

TEST(LoadBalanced, TwoLinearProcessorsSplitInverselyToSpeed)
{
    // a: 1 s per granule, b: 3 s per granule; n = 8 balances at a=6 (6 s), b=2 (6 s).
    std::vector<ProcessorProfile> ps(2);
    for (Granules x = 1; x <= 8; ++x) {
        ps[0].points.push_back({x, 1.0 * x, 2.0 * x});
        ps[1].points.push_back({x, 3.0 * x, 1.0 * x});
    }
    LoadBalanced lb = load_balanced_distribution(ps, 8, 10.0);
    EXPECT_EQ(lb.distribution.sizes, (std::vector<Granules>{6, 2}));
    EXPECT_DOUBLE_EQ(lb.spread_s, 0.0);
    EXPECT_DOUBLE_EQ(lb.distribution.time_s, 6.0);
    EXPECT_DOUBLE_EQ(lb.distribution.dynamic_energy_j, 14.0);
    EXPECT_DOUBLE_EQ(lb.distribution.total_energy_j, 14.0 + 60.0);
}

TEST(LoadBalanced, LeavesAProcessorIdleOnlyWhenEveryoneCannotBeBusy)
{
    // b's only size is too large to be combined with any a size for n = 5.
    std::vector<ProcessorProfile> ps(2);
    ps[0].points = {{2, 1, 1}, {5, 3, 3}};
    ps[1].points = {{4, 1, 1}};
    LoadBalanced lb = load_balanced_distribution(ps, 5);
    EXPECT_EQ(lb.distribution.sizes, (std::vector<Granules>{5, 0}));
    EXPECT_EQ(lb.distribution.active, 1);
    EXPECT_THROW(load_balanced_distribution(ps, 3), UnreachableWorkloadError);
}

TEST(LoadBalanced, MatchesBruteForceOnRandomInstances)
{
    std::mt19937_64 rng(20261121);
    for (int trial = 0; trial < 1500; ++trial) {
        const int p = 1 + static_cast<int>(rng() % 4);
        const Granules n = 1 + static_cast<Granules>(rng() % 14);
        std::vector<ProcessorProfile> ps(static_cast<std::size_t>(p));
        for (auto &prof : ps) {
            const int m = 1 + static_cast<int>(rng() % std::min<Granules>(6, n));  // distinct sizes in 1..n
            std::vector<Granules> sizes;
            while (static_cast<int>(sizes.size()) < m) {
                Granules x = 1 + static_cast<Granules>(rng() % n);
                if (std::find(sizes.begin(), sizes.end(), x) == sizes.end())
                    sizes.push_back(x);
            }
            for (Granules x : sizes)  // non-monotone times, small integers so ties happen
                prof.points.push_back({x, 1.0 + static_cast<double>(rng() % 9), static_cast<double>(rng() % 5)});
        }
        Brute brute;
        enumerate(ps, 0, n, 0, 0, 0, brute);
        if (!brute.found) {
            EXPECT_THROW(load_balanced_distribution(ps, n), UnreachableWorkloadError) << "trial " << trial;
            continue;
        }
        LoadBalanced lb = load_balanced_distribution(ps, n);
        Granules sum = 0;
        for (Granules x : lb.distribution.sizes)
            sum += x;
        ASSERT_EQ(sum, n) << "trial " << trial;
        EXPECT_EQ(lb.distribution.active, brute.active) << "trial " << trial;
        EXPECT_DOUBLE_EQ(lb.spread_s, brute.spread) << "trial " << trial;
        EXPECT_DOUBLE_EQ(lb.distribution.time_s, brute.makespan) << "trial " << trial;
    }
}
