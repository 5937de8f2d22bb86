// SPDX-License-Identifier: LGPL-2.1-or-later
// The straggle hedge's pieces: the robust spread of a PU kind's out-of-sample misses and
// the expected end of a plan's final blocks under that spread.
#include "sched_policies/plbhac/core/plbhac_straggle.h"

#include <gtest/gtest.h>

#include <gsl/gsl_cdf.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

using hetpu::plbhac_miss_spread;
using hetpu::PlbhacStraggleDraws;

namespace {

// n log-misses laid out at the normal law's quantiles: a sample of exactly spread `s`.
std::vector<double> normal_misses(double s, int n)
{
    std::vector<double> v;
    for (int i = 0; i < n; ++i)
        v.push_back(s * gsl_cdf_ugaussian_Pinv((i + 0.5) / n));
    return v;
}

TEST(PlbhacStraggle, SpreadIsTheNormalSigmaOfTheMisses)
{
    EXPECT_NEAR(plbhac_miss_spread(normal_misses(0.2, 41)), 0.2, 0.01);
    EXPECT_NEAR(plbhac_miss_spread(normal_misses(0.02, 41)), 0.02, 0.001);
}

TEST(PlbhacStraggle, SpreadIsUnknownFromFewerThanTwoMisses)
{
    EXPECT_EQ(plbhac_miss_spread({}), 0.0);
    EXPECT_EQ(plbhac_miss_spread({0.3}), 0.0);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(plbhac_miss_spread({0.3, nan}), 0.0) << "a non-finite miss is no sample";
}

TEST(PlbhacStraggle, AFewMissesGiveTheirLargest)
{
    EXPECT_DOUBLE_EQ(plbhac_miss_spread({0.01, -0.04}), 0.04);
    EXPECT_DOUBLE_EQ(plbhac_miss_spread({0.3, -0.3, 0.1, -0.2}), 0.3);
    // From kPlbhacMinMisses on, the median's deviation: a fifth miss of 1 does not count.
    EXPECT_LT(plbhac_miss_spread({0.1, -0.1, 0.05, -0.05, 1.0}), 0.2);
}

TEST(PlbhacStraggle, OneChangeOfSpeedDoesNotMakeAKindNoisy)
{
    std::vector<double> misses = normal_misses(0.03, 20);
    misses.push_back(std::log(2.5));  // a PU slowed 2.5x once
    EXPECT_LT(plbhac_miss_spread(misses), 0.04);
}

TEST(PlbhacStraggle, SpreadIgnoresABiasCommonToEveryMiss)
{
    std::vector<double> misses = normal_misses(0.1, 31);
    for (double &m : misses)
        m += std::log(1.3);  // every block 30% slower than predicted: the model's business
    EXPECT_NEAR(plbhac_miss_spread(misses), 0.1, 0.005);
}

TEST(PlbhacStraggle, WithoutSpreadThePlanEndsAsPredicted)
{
    const PlbhacStraggleDraws steady({0.0, 0.0, 0.0});
    EXPECT_DOUBLE_EQ(steady.expected_end({0.5, 0.0, 0.1}, {1.0, 1.2, 0.2}), 1.5);
    EXPECT_EQ(steady.expected_end({0.5, 0.0, 0.1}, {0.0, 0.0, 0.0}), 0.0) << "no block: nothing ends";
    EXPECT_THROW(steady.expected_end({0.0}, {1.0}), std::invalid_argument);
}

TEST(PlbhacStraggle, OneNoisyBlockEndsAsPredictedOnAverage)
{
    const PlbhacStraggleDraws draws(std::vector<double>{0.2}, 4000, 7);
    // Mean-one misses: 1 + 2 x (1 +- 4 standard errors of 0.2 / sqrt(4000)).
    EXPECT_NEAR(draws.expected_end(std::vector<double>{1.0}, std::vector<double>{2.0}), 3.0,
                2.0 * 0.2 * 4 / std::sqrt(4000.0));
}

TEST(PlbhacStraggle, ManyNoisyBlocksEndLaterThanPredicted)
{
    // 15 blocks predicted to end at 1 s with 20% scatter: the latest ends about 1.7
    // standard deviations late (the mean of the largest of 15 normals), far beyond noise.
    const PlbhacStraggleDraws fifteen(std::vector<double>(15, 0.2));
    const double end15 = fifteen.expected_end(std::vector<double>(15, 0.0), std::vector<double>(15, 1.0));
    EXPECT_GT(end15, 1.25);
    EXPECT_LT(end15, 1.45);
    // Three of them, the others given nothing, end earlier.
    std::vector<double> three(15, 0.0);
    three[0] = three[7] = three[14] = 1.0;
    EXPECT_LT(fifteen.expected_end(std::vector<double>(15, 0.0), three), end15 - 0.1);
    // A steady block predicted to end at 1.1 s is later than 15 blocks of 1% scatter.
    std::vector<double> spreads(15, 0.01);
    spreads.push_back(0.0);
    std::vector<double> durations(15, 1.0);
    durations.push_back(1.1);
    EXPECT_NEAR(PlbhacStraggleDraws(spreads).expected_end(std::vector<double>(16, 0.0), durations), 1.1, 1e-12);
}

TEST(PlbhacStraggle, TheSameSeedGivesTheSameLuck)
{
    const std::vector<double> spreads{0.3, 0.3, 0.3};
    const std::vector<double> ready{0.0, 0.0, 0.2}, duration{1.0, 0.0, 0.9};
    EXPECT_EQ(PlbhacStraggleDraws(spreads, 64, 3).expected_end(ready, duration),
              PlbhacStraggleDraws(spreads, 64, 3).expected_end(ready, duration));
    EXPECT_NE(PlbhacStraggleDraws(spreads, 64, 3).expected_end(ready, duration),
              PlbhacStraggleDraws(spreads, 64, 4).expected_end(ready, duration));
}

TEST(PlbhacStraggle, NewSpreadsRescaleTheSameDraws)
{
    const std::vector<double> ready{0.0, 0.1, 0.2}, duration{1.0, 0.8, 0.9};
    PlbhacStraggleDraws draws({0.0, 0.0, 0.0}, 64, 5);
    EXPECT_DOUBLE_EQ(draws.expected_end(ready, duration), 1.1) << "no spread: the plan as predicted";
    draws.set_spreads({0.1, 0.3, 0.2});
    EXPECT_EQ(draws.expected_end(ready, duration),
              PlbhacStraggleDraws({0.1, 0.3, 0.2}, 64, 5).expected_end(ready, duration));
    EXPECT_EQ(draws.spreads(), (std::vector<double>{0.1, 0.3, 0.2}));
    EXPECT_THROW(draws.set_spreads({0.1}), std::invalid_argument);
}

}  // namespace
