// SPDX-License-Identifier: LGPL-2.1-or-later
// LinearTransferModel: G_p(x) = a1*x + a2 with zero-time transfers, spikes and bad input.
#include "perfmodels/core/transfer_model.h"
#include "tests/unit/thrown_message.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <random>

using namespace hetpu;

TEST(LinearTransferModel, RecoversBandwidthAndLatency)
{
    LinearTransferModel m;
    std::mt19937 rng(2);
    std::normal_distribution<double> gauss(0.0, 0.02);
    const double a1 = 1.0 / 6e9 * 8, a2 = 2e-5;  // 8-byte elements at 6 GB/s, 20 us latency
    for (int i = 0; i < 30; ++i) {
        const double x = 1e5 + 1e5 * (i % 9);
        ASSERT_NO_THROW(m.add(x, (a1 * x + a2) * (1.0 + gauss(rng))));
    }
    EXPECT_TRUE(m.ready());
    EXPECT_NEAR(m.slope(), a1, 0.05 * a1) << m.describe();
    for (double x : {1e5, 5e5, 9e5})
        EXPECT_NEAR(m.predict(x), a1 * x + a2, 0.05 * (a1 * x + a2));
    EXPECT_DOUBLE_EQ(m.derivative(5e5), m.slope());
}

TEST(LinearTransferModel, TwoPointsGiveTheLineThroughThem)
{
    LinearTransferModel m;
    ASSERT_NO_THROW(m.add(1000, 0.002));
    EXPECT_FALSE(m.ready());
    EXPECT_NEAR(m.predict(2000), 0.004, 1e-12) << "one size: proportional";
    ASSERT_NO_THROW(m.add(3000, 0.004));
    EXPECT_NEAR(m.slope(), 1e-6, 1e-15);
    EXPECT_NEAR(m.intercept(), 1e-3, 1e-12);
}

TEST(LinearTransferModel, LocalDataMeansZeroTransferTime)
{
    LinearTransferModel m;
    for (int i = 1; i <= 5; ++i)
        ASSERT_NO_THROW(m.add(1000.0 * i, 0.0));
    EXPECT_EQ(m.predict(3000), 0.0);
    EXPECT_EQ(m.derivative(3000), 0.0);
}

TEST(LinearTransferModel, SpikesAndNegativeInterceptAreHandled)
{
    LinearTransferModel m;
    for (int i = 0; i < 30; ++i) {
        const double x = 1000.0 * (1 + i % 7);
        const double t = 1e-6 * x;
        ASSERT_NO_THROW(m.add(x, (i == 20 || i == 29) ? 10 * t : t));
    }
    EXPECT_NEAR(m.slope(), 1e-6, 1e-8) << m.describe();
    // A fitted line can cross zero for tiny blocks: prediction clamps at 0.
    LinearTransferModel neg;
    ASSERT_NO_THROW(neg.add(1000, 0.001));
    ASSERT_NO_THROW(neg.add(2000, 0.003));
    EXPECT_EQ(neg.predict(100), 0.0);
    EXPECT_EQ(neg.derivative(100), 0.0);
    EXPECT_GT(neg.predict(1000), 0.0);
}

TEST(LinearTransferModel, BadInputIsRejected)
{
    LinearTransferModel m;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_THROW_MSG(m.add(0, 1.0), std::invalid_argument,
                     "transfer model: block size must be a positive finite number of elements, got 0");
    EXPECT_THROW_MSG(m.add(nan, 1.0), std::invalid_argument, "transfer model: block size");
    EXPECT_THROW_MSG(m.add(10, -1.0), std::invalid_argument,
                     "transfer model: transfer time must be finite and >= 0, got -1 s");
    EXPECT_THROW_MSG(m.add(10, nan), std::invalid_argument, "transfer model: transfer time");
    EXPECT_EQ(m.size(), 0u);
}
