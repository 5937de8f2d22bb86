// SPDX-License-Identifier: LGPL-2.1-or-later
// The basis functions and their derivatives (the solver's exact derivatives rest on them).
#include "perfmodels/core/curve_basis.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace hetpu;

TEST(CurveBasis, DerivativesMatchFiniteDifferences)
{
    for (BasisFn f : kAllBasisFns) {
        for (double u : {0.05, 0.3, 1.0, 2.5}) {
            const double h = 1e-6 * u;
            const double fd = (basis_value(f, u + h) - basis_value(f, u - h)) / (2 * h);
            EXPECT_NEAR(basis_derivative(f, u), fd, 1e-6 * (1 + std::fabs(fd))) << basis_name(f) << " at " << u;
        }
    }
}

TEST(CurveBasis, ValuesAndNames)
{
    EXPECT_DOUBLE_EQ(basis_value(BasisFn::X3, 2.0), 8.0);
    EXPECT_DOUBLE_EQ(basis_value(BasisFn::XLog, 1.0), 0.0);
    EXPECT_DOUBLE_EQ(basis_value(BasisFn::Exp, 0.0), 1.0);
    EXPECT_EQ(basis_name(BasisFn::XExp), "u*exp(u)");
    EXPECT_EQ(basis_name(BasisFn::Constant), "1");
}
