// SPDX-License-Identifier: LGPL-2.1-or-later
#include "common/finite_number.h"

#include <gtest/gtest.h>

#include <cmath>

using hetpu::finite_number;

TEST(FiniteNumber, AcceptsWholeFiniteNumerals)
{
    EXPECT_EQ(finite_number("90"), 90.0);
    EXPECT_EQ(finite_number("-2.5e3"), -2500.0);
    EXPECT_EQ(finite_number(".5"), 0.5);
    EXPECT_EQ(finite_number("0.1"), 0.1);  // the nearest double, as the compiler reads it
    // Underflow still yields the nearest double, not an error.
    const std::optional<double> tiny = finite_number("1e-320");
    ASSERT_TRUE(tiny.has_value());
    EXPECT_GT(*tiny, 0.0);
    EXPECT_LT(*tiny, 1e-300);
}

TEST(FiniteNumber, RejectsBlanksJunkAndNonFinite)
{
    for (const char *bad : {"", " 1", "1 ", "\t1", "1x", "x1", "1,5", "inf", "-inf", "nan", "1e999", "--1", "0x"})
        EXPECT_FALSE(finite_number(bad).has_value()) << "'" << bad << "'";
}

TEST(FiniteNumber, ReadsOnlyTheViewNotWhatFollowsIt)
{
    const char text[] = "12345";
    EXPECT_EQ(finite_number(std::string_view(text, 2)), 12.0);
}
