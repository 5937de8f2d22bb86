// SPDX-License-Identifier: LGPL-2.1-or-later
// Verification of C = A x B: a correct product passes in both precisions, and wrong
// results are caught: NaN (never computed) entries and columns always, a wrong column
// always (every column is sampled), a single wrong entry whenever its row is checked.
#include "apps/matmul/matmul_problem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

using hetpu::matmul::Problem;
using hetpu::matmul::verify;
using hetpu::matmul::VerifyOptions;

// A plain triple loop in T: a valid (if slow) summation order the tolerance must accept.
template <typename T> void multiply(Problem<T> &p)
{
    for (uint64_t j = 0; j < p.n; ++j)
        for (uint64_t i = 0; i < p.m; ++i) {
            T sum = 0;
            for (uint64_t k = 0; k < p.k; ++k)
                sum += p.a[i + k * p.m] * p.b[k + j * p.k];
            p.c_at(i, j) = sum;
        }
}

template <typename T> class MatmulVerify : public ::testing::Test {};

using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatmulVerify, Precisions);

}  // namespace

TYPED_TEST(MatmulVerify, ProblemIsDeterministicAndStartsWithNaN)
{
    Problem<TypeParam> p1(7, 5, 3, 11), p2(7, 5, 3, 11), p3(7, 5, 3, 12);
    EXPECT_EQ(p1.a, p2.a);
    EXPECT_EQ(p1.b, p2.b);
    EXPECT_NE(p1.a, p3.a);
    Problem<TypeParam> square(6, 6, 6, 11);
    EXPECT_NE(square.a, square.b);  // A and B come from distinct streams
    for (TypeParam x : p1.a) {
        EXPECT_GE(x, TypeParam(-1));
        EXPECT_LE(x, TypeParam(1));
    }
    for (TypeParam x : p1.c)
        EXPECT_TRUE(std::isnan(x));
    EXPECT_FALSE(verify(p1).ok());
}

TYPED_TEST(MatmulVerify, CorrectProductPasses)
{
    Problem<TypeParam> p(37, 23, 301, 5);
    multiply(p);
    auto r = verify(p);
    EXPECT_TRUE(r.ok()) << r.bad << " bad, worst " << r.worst_tol_ratio << " x tolerance";
    EXPECT_GE(r.checked, 2u * p.n);
    EXPECT_LE(r.worst_tol_ratio, 1.0);
    // Every entry, not only the sampled ones, is within the bound.
    auto all = verify(p, VerifyOptions{static_cast<unsigned>(p.m), 0});
    EXPECT_TRUE(all.ok());
    EXPECT_EQ(all.checked, p.m * p.n);
}

TYPED_TEST(MatmulVerify, ReversedSummationOrderPasses)
{
    Problem<TypeParam> p(9, 9, 1000, 3);
    for (uint64_t j = 0; j < p.n; ++j)
        for (uint64_t i = 0; i < p.m; ++i) {
            TypeParam sum = 0;
            for (uint64_t k = p.k; k-- > 0;)
                sum += p.a[i + k * p.m] * p.b[k + j * p.k];
            p.c_at(i, j) = sum;
        }
    EXPECT_TRUE(verify(p, VerifyOptions{static_cast<unsigned>(p.m), 0}).ok());
}

TYPED_TEST(MatmulVerify, NaNColumnFailsWhereverItIs)
{
    Problem<TypeParam> base(16, 12, 16, 9);
    multiply(base);
    for (uint64_t col = 0; col < base.n; ++col) {
        Problem<TypeParam> p = base;
        for (uint64_t i = 0; i < p.m; ++i)
            p.c_at(i, col) = std::numeric_limits<TypeParam>::quiet_NaN();
        auto r = verify(p, VerifyOptions{2, 0});
        EXPECT_FALSE(r.ok()) << "column " << col;
        EXPECT_EQ(r.bad, p.m);
        EXPECT_EQ(r.first_bad_col, col);
    }
}

TYPED_TEST(MatmulVerify, SingleNaNOrInfinityEntryAlwaysFails)
{
    Problem<TypeParam> base(16, 12, 16, 9);
    multiply(base);
    for (uint64_t col = 0; col < base.n; ++col)
        for (uint64_t row = 0; row < base.m; row += 5) {
            Problem<TypeParam> p = base;
            p.c_at(row, col) =
                (row % 2) ? std::numeric_limits<TypeParam>::infinity() : std::numeric_limits<TypeParam>::quiet_NaN();
            auto r = verify(p, VerifyOptions{2, 0});
            ASSERT_FALSE(r.ok()) << "row " << row << " column " << col;
            EXPECT_EQ(r.bad, 1u);
            EXPECT_EQ(r.first_bad_row, row);
            EXPECT_EQ(r.first_bad_col, col);
        }
}

TYPED_TEST(MatmulVerify, WrongFiniteColumnFailsWhereverItIs)
{
    // A column computed from the wrong B column (a plausible indexing bug): finite values,
    // so only the per-column sampling can catch it, with the minimal 2 rows per column.
    Problem<TypeParam> base(32, 10, 40, 21);
    multiply(base);
    for (uint64_t col = 0; col < base.n; ++col) {
        Problem<TypeParam> p = base;
        const uint64_t other = (col + 1) % p.n;
        for (uint64_t i = 0; i < p.m; ++i)
            p.c_at(i, col) = base.c_at(i, other);
        EXPECT_FALSE(verify(p, VerifyOptions{2, 0}).ok()) << "column " << col;
    }
}

TYPED_TEST(MatmulVerify, SlightlyWrongColumnFails)
{
    // Every entry of one column off by 1e-3 of its terms' magnitude: far beyond rounding.
    Problem<TypeParam> base(32, 10, 40, 21);
    multiply(base);
    for (uint64_t col = 0; col < base.n; ++col) {
        Problem<TypeParam> p = base;
        for (uint64_t i = 0; i < p.m; ++i) {
            long double abs_sum = 0;
            hetpu::matmul::reference_entry(p, i, col, &abs_sum);
            p.c_at(i, col) += static_cast<TypeParam>(1e-3L * abs_sum);
        }
        EXPECT_FALSE(verify(p, VerifyOptions{2, 0}).ok()) << "column " << col;
    }
}

TYPED_TEST(MatmulVerify, SingleWrongEntryCaughtWhenRowsAreAllChecked)
{
    Problem<TypeParam> base(12, 9, 20, 4);
    multiply(base);
    const VerifyOptions all_rows{static_cast<unsigned>(base.m), 0};
    for (uint64_t col = 0; col < base.n; ++col)
        for (uint64_t row = 0; row < base.m; ++row) {
            Problem<TypeParam> p = base;
            p.c_at(row, col) += TypeParam(0.5);
            auto r = verify(p, all_rows);
            ASSERT_FALSE(r.ok()) << "row " << row << " column " << col;
            EXPECT_EQ(r.bad, 1u);
            EXPECT_EQ(r.first_bad_row, row);
            EXPECT_EQ(r.first_bad_col, col);
        }
}

TYPED_TEST(MatmulVerify, DefaultSamplingCatchesSingleWrongEntryInSampledRow)
{
    // With 2 rows per column out of 2, every row is sampled: the default must catch it.
    Problem<TypeParam> base(2, 50, 30, 8);
    multiply(base);
    for (uint64_t col = 0; col < base.n; col += 7) {
        Problem<TypeParam> p = base;
        p.c_at(1, col) = -p.c_at(1, col) + TypeParam(1);
        EXPECT_FALSE(verify(p).ok()) << "column " << col;
    }
}

TYPED_TEST(MatmulVerify, ToleranceIsTheRoundingBound)
{
    using T = TypeParam;
    const long double eps = std::numeric_limits<T>::epsilon();
    EXPECT_NEAR(static_cast<double>(hetpu::matmul::tolerance<T>(100, 10.0L) / (2.0L * 100 * eps * 10.0L)), 1.0, 1e-6);
    EXPECT_GT(hetpu::matmul::tolerance<T>(100, 0.0L), 0.0L);
}
