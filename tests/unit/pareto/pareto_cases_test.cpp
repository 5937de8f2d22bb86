// SPDX-License-Identifier: LGPL-2.1-or-later
// Hand-made HPOPTA / HEPOPTA / HTPOPTA cases with answers worked out by hand, and input
// validation. The random comparisons against oracles live in pareto_oracle_test.cpp.
#include "sched_policies/pareto/core/hepopta.h"
#include "sched_policies/pareto/core/hpopta.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using hetpu::Distribution;
using hetpu::Granules;
using hetpu::ProcessorProfile;
using hetpu::ProfilePoint;

namespace {

// Sizes 1..max with t(x) = a * x and e(x) = fixed + b * x.
ProcessorProfile linear(Granules max, double a, double b, double fixed = 0.0)
{
    ProcessorProfile prof;
    for (Granules x = 1; x <= max; ++x)
        prof.points.push_back(ProfilePoint{x, a * x, fixed + b * x});
    return prof;
}

std::vector<Granules> sizes(const Distribution &d) { return d.sizes; }

template <typename F> std::string error_of(F &&f)
{
    try {
        f();
    } catch (const std::exception &e) {
        return e.what();
    }
    return "";
}

}  // namespace

// Two identical linear processors: every distribution costs the same energy, so the front
// is the single balanced point.
TEST(ParetoCases, TwoIdenticalLinearProcessors)
{
    const std::vector<ProcessorProfile> profs{linear(10, 1.0, 1.0), linear(10, 1.0, 1.0)};
    const Distribution fast = hetpu::hpopta(profs, 10);
    EXPECT_EQ(sizes(fast), (std::vector<Granules>{5, 5}));
    EXPECT_EQ(fast.time_s, 5.0);
    EXPECT_EQ(fast.dynamic_energy_j, 10.0);

    const auto front = hetpu::hepopta(profs, 10);
    ASSERT_EQ(front.size(), 1u);
    EXPECT_EQ(sizes(front[0]), (std::vector<Granules>{5, 5}));
    EXPECT_EQ(front[0].active, 2);
}

// Two identical processors with a fixed 10 J activation cost: using one processor is the
// cheapest (t = 10 s, e = 20 J), splitting evenly the fastest (5 s, 30 J); every other
// split costs 30 J and is slower than 5 s, hence dominated.
TEST(ParetoCases, TwoIdenticalProcessorsWithActivationCost)
{
    const std::vector<ProcessorProfile> profs{linear(10, 1.0, 1.0, 10.0), linear(10, 1.0, 1.0, 10.0)};
    const auto front = hetpu::hepopta(profs, 10);
    ASSERT_EQ(front.size(), 2u);
    EXPECT_EQ(front[0].time_s, 10.0);
    EXPECT_EQ(front[0].dynamic_energy_j, 20.0);
    EXPECT_EQ(front[0].active, 1);
    EXPECT_EQ(front[1].time_s, 5.0);
    EXPECT_EQ(front[1].dynamic_energy_j, 30.0);
    EXPECT_EQ(sizes(front[1]), (std::vector<Granules>{5, 5}));

    // Total energy with P_S = 3 W: 20 + 30 = 50 J vs 30 + 15 = 45 J: the fast split wins
    // both objectives, so the total-energy front collapses to it.
    const auto total = hetpu::htpopta(profs, 10, 3.0);
    ASSERT_EQ(total.size(), 1u);
    EXPECT_EQ(total[0].time_s, 5.0);
    EXPECT_EQ(total[0].total_energy_j, 45.0);
    // With P_S = 1 W: 30 J vs 35 J: both points stay.
    const auto total1 = hetpu::htpopta(profs, 10, 1.0);
    ASSERT_EQ(total1.size(), 2u);
    EXPECT_EQ(total1[0].total_energy_j, 30.0);
    EXPECT_EQ(total1[1].total_energy_j, 35.0);
    // P_S = 0: HTPOPTA is HEPOPTA.
    const auto total0 = hetpu::htpopta(profs, 10, 0.0);
    ASSERT_EQ(total0.size(), front.size());
    for (std::size_t i = 0; i < front.size(); ++i)
        EXPECT_EQ(total0[i].sizes, front[i].sizes);
}

// A fast, power-hungry processor and a slow, frugal one (linear profiles): the front runs
// from "all on the frugal one" to the balanced split, every point trading time for energy.
TEST(ParetoCases, FastHungryVersusSlowFrugal)
{
    const std::vector<ProcessorProfile> profs{linear(12, 1.0, 4.0), linear(12, 2.0, 1.0)};
    const auto front = hetpu::hepopta(profs, 12);
    ASSERT_FALSE(front.empty());
    EXPECT_EQ(sizes(front.front()), (std::vector<Granules>{0, 12}));  // 24 s, 12 J
    EXPECT_EQ(sizes(front.back()), (std::vector<Granules>{8, 4}));    // 8 s, 44 J
    // x on the fast one: time max(x, 2(12-x)), energy 12 + 3x; Pareto for x = 0..8.
    ASSERT_EQ(front.size(), 9u);
    for (std::size_t i = 1; i < front.size(); ++i) {
        EXPECT_GT(front[i].dynamic_energy_j, front[i - 1].dynamic_energy_j);
        EXPECT_LT(front[i].time_s, front[i - 1].time_s);
    }
}

// Equal time and energy: (2, 0, 0) and (0, 1, 1) both take 1 s and 2 J; fewer active wins.
TEST(ParetoCases, TieGoesToFewerActiveProcessors)
{
    std::vector<ProcessorProfile> profs(3);
    profs[0].points = {{2, 1.0, 2.0}};
    profs[1].points = {{1, 1.0, 1.0}};
    profs[2].points = {{1, 1.0, 1.0}};
    const auto front = hetpu::hepopta(profs, 2);
    ASSERT_EQ(front.size(), 1u);
    EXPECT_EQ(sizes(front[0]), (std::vector<Granules>{2, 0, 0}));
    EXPECT_EQ(front[0].active, 1);
    EXPECT_EQ(hetpu::hpopta(profs, 2).sizes, (std::vector<Granules>{2, 0, 0}));
}

// Non-monotone profile: a bigger size can be faster and cheaper (a cache or padding effect).
TEST(ParetoCases, NonMonotoneProfile)
{
    std::vector<ProcessorProfile> profs(2);
    profs[0].points = {{3, 9.0, 9.0}, {4, 2.0, 1.0}};
    profs[1].points = {{1, 1.0, 5.0}, {2, 5.0, 0.5}};
    // Distributions of 4: (4,0) 2 s 1 J; (3,1) 9 s 14 J; (4,0) dominates everything else.
    const auto front = hetpu::hepopta(profs, 4);
    ASSERT_EQ(front.size(), 1u);
    EXPECT_EQ(sizes(front[0]), (std::vector<Granules>{4, 0}));
}

TEST(ParetoCases, SingleProcessorAndZeroWorkload)
{
    const std::vector<ProcessorProfile> one{linear(5, 2.0, 3.0)};
    const auto front = hetpu::hepopta(one, 4);
    ASSERT_EQ(front.size(), 1u);
    EXPECT_EQ(front[0].time_s, 8.0);
    EXPECT_EQ(front[0].dynamic_energy_j, 12.0);

    const auto idle = hetpu::hepopta({linear(3, 1, 1), linear(3, 1, 1)}, 0);
    ASSERT_EQ(idle.size(), 1u);
    EXPECT_EQ(sizes(idle[0]), (std::vector<Granules>{0, 0}));
    EXPECT_EQ(idle[0].time_s, 0.0);
    EXPECT_EQ(idle[0].active, 0);
}

TEST(ParetoCases, ZeroEnergyPointsAndRedundantIdlePoint)
{
    std::vector<ProcessorProfile> profs(2);
    profs[0].points = {{0, 0.0, 0.0}, {2, 4.0, 0.0}};
    profs[1].points = {{1, 1.0, 0.0}, {2, 1.0, 3.0}};
    // (2,0): 4 s 0 J; (0,2): 1 s 3 J; (1,1) impossible (no size 1 on P0).
    const auto front = hetpu::hepopta(profs, 2);
    ASSERT_EQ(front.size(), 2u);
    EXPECT_EQ(sizes(front[0]), (std::vector<Granules>{2, 0}));
    EXPECT_EQ(sizes(front[1]), (std::vector<Granules>{0, 2}));
}

TEST(ParetoCases, StatsDescribeTheSearch)
{
    const std::vector<ProcessorProfile> profs{linear(10, 1.0, 2.0, 1.0), linear(10, 1.5, 1.0), linear(10, 3.0, 0.5)};
    hetpu::ParetoStats st;
    const auto front = hetpu::hepopta(profs, 15, &st);
    EXPECT_EQ(st.t_opt_s, front.back().time_s);
    EXPECT_EQ(st.eps_j, front.back().dynamic_energy_j);
    EXPECT_GT(st.cells_built, 0);
    EXPECT_GT(st.candidates, 0);
}

TEST(ParetoValidation, RejectsBadProfiles)
{
    using hetpu::InvalidProfileError;
    EXPECT_THROW(hetpu::hepopta({}, 1), InvalidProfileError);
    EXPECT_THROW(hetpu::hepopta({linear(3, 1, 1)}, -1), InvalidProfileError);
    EXPECT_THROW(hetpu::hepopta({linear(3, 1, 1)}, hetpu::kMaxParetoWorkload + 1), InvalidProfileError);

    ProcessorProfile dup = linear(3, 1, 1);
    dup.name = "gpu0";
    dup.points.push_back({2, 5.0, 5.0});
    const std::string msg = error_of([&] { hetpu::hepopta({dup}, 2); });
    EXPECT_NE(msg.find("gpu0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("size 2 appears more than once"), std::string::npos) << msg;

    ProcessorProfile bad = linear(3, 1, 1);
    bad.points[1].time_s = 0.0;
    EXPECT_NE(error_of([&] { hetpu::hpopta({bad}, 2); }).find("time must be finite and > 0"), std::string::npos);
    bad = linear(3, 1, 1);
    bad.points[1].energy_j = -1.0;
    EXPECT_NE(error_of([&] { hetpu::hpopta({bad}, 2); }).find("energy must be finite and >= 0"), std::string::npos);
    bad = linear(3, 1, 1);
    bad.points[1].time_s = std::numeric_limits<double>::quiet_NaN();
    EXPECT_THROW(hetpu::hpopta({bad}, 2), InvalidProfileError);
    bad = linear(3, 1, 1);
    bad.points[1].size = -2;
    EXPECT_THROW(hetpu::hpopta({bad}, 2), InvalidProfileError);
    bad = linear(3, 1, 1);
    bad.points.push_back({0, 1.0, 0.0});  // an idle point must be (0, 0, 0)
    EXPECT_THROW(hetpu::hpopta({bad}, 2), InvalidProfileError);

    EXPECT_THROW(hetpu::htpopta({linear(3, 1, 1)}, 2, -1.0), InvalidProfileError);
    EXPECT_THROW(hetpu::htpopta({linear(3, 1, 1)}, 2, std::numeric_limits<double>::infinity()), InvalidProfileError);
}

TEST(ParetoValidation, UnreachableWorkloadIsAnErrorNotAnEmptyFront)
{
    std::vector<ProcessorProfile> profs(2);
    profs[0].points = {{2, 1.0, 1.0}};
    profs[1].points = {{4, 1.0, 1.0}};
    for (Granules n : {1, 3, 5, 7, 100}) {
        const std::string msg = error_of([&] { hetpu::hepopta(profs, n); });
        EXPECT_NE(msg.find("cannot be formed"), std::string::npos) << "n=" << n << ": " << msg;
        EXPECT_THROW(hetpu::htpopta(profs, n, 1.0), hetpu::UnreachableWorkloadError);
    }
    for (Granules n : {0, 2, 4, 6})
        EXPECT_FALSE(hetpu::hepopta(profs, n).empty());
}

TEST(ParetoValidation, EvaluateDistribution)
{
    const std::vector<ProcessorProfile> profs{linear(4, 1.0, 2.0), linear(4, 3.0, 1.0)};
    const Distribution d = hetpu::evaluate_distribution(profs, {1, 3}, 2.0);
    EXPECT_EQ(d.time_s, 9.0);
    EXPECT_EQ(d.dynamic_energy_j, 5.0);
    EXPECT_EQ(d.total_energy_j, 23.0);
    EXPECT_EQ(d.active, 2);
    EXPECT_THROW(hetpu::evaluate_distribution(profs, {5, 0}), hetpu::InvalidProfileError);
    EXPECT_THROW(hetpu::evaluate_distribution(profs, {1}), hetpu::InvalidProfileError);
}
