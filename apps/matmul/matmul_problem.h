// SPDX-License-Identifier: LGPL-2.1-or-later
// The matrices of one matmul run and their verification. Pure C++ (no StarPU, no BLAS).
//
// Storage is column-major: A is m x k, B is k x n, C is m x n, and column j of B or C is
// contiguous, so the block of columns [offset, offset + count) is one contiguous slice.
// C starts filled with NaN: a column no task wrote stays NaN and verification reports it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace hetpu::matmul {

template <typename T> struct Problem {
    // Allocates and fills A and B with deterministic pseudo-random values in [-1, 1)
    // derived from seed (the same on every platform), and fills C with NaN.
    Problem(uint64_t m, uint64_t n, uint64_t k, uint64_t seed);

    // Fill C with NaN again (before each repetition).
    void reset_c();

    T *a_data() { return a.data(); }
    T *b_data() { return b.data(); }
    T *c_data() { return c.data(); }
    T &c_at(uint64_t row, uint64_t col) { return c[row + col * m]; }
    T c_at(uint64_t row, uint64_t col) const { return c[row + col * m]; }

    uint64_t m, n, k, seed;
    std::vector<T> a, b, c;
};

struct VerifyOptions {
    // Rows checked in every column (distinct; all rows when m is not larger).
    unsigned rows_per_column = 2;
    // Further (row, column) entries checked, drawn uniformly at random.
    uint64_t extra_samples = 1024;
};

struct VerifyResult {
    uint64_t checked = 0;  // entries compared with a reference dot product
    uint64_t bad = 0;      // non-finite entries plus failed checks (an entry drawn twice counts twice)
    // Worst |c - ref| / sum_k |a_ik * b_kj| over the checked entries (infinity when an
    // entry is not finite): the scale-free error that the tolerance bounds.
    double worst_rel_error = 0;
    // Worst |c - ref| / tolerance; <= 1 for every accepted entry.
    double worst_tol_ratio = 0;
    // First bad entry found (column-major scan order for non-finite entries).
    uint64_t first_bad_row = 0, first_bad_col = 0;
    bool ok() const { return bad == 0; }
};

// Check C = A x B.
//  1. Every entry of C is scanned for NaN/infinity, so a block that was never computed
//     (C keeps its NaN) or produced garbage is always caught, whatever the sampling.
//  2. In EVERY column, options.rows_per_column random rows are recomputed in long double,
//     plus options.extra_samples random entries anywhere; so a wrong column is caught too.
// An entry is accepted when |c - ref| <= 2 * k * eps(T) * sum_k |a_ik * b_kj| + tiny, a
// rigorous bound on the rounding error of any summation order (including blocked, FMA
// and GPU reductions; the classic bound is gamma_k = k*u/(1 - k*u) with u = eps/2).
// The sampling is deterministic (derived from the problem's seed).
template <typename T> VerifyResult verify(const Problem<T> &p, const VerifyOptions &options = VerifyOptions());

// Columns of B and C wherever they are held (a whole Problem, or a rank's share): each
// accessor gives column j, or nullptr when it is not held.
template <typename T> struct ColumnsView {
    uint64_t m = 0, k = 0, seed = 0;
    const T *a = nullptr;  // m x k, column-major
    std::function<const T *(uint64_t)> b_col, c_col;
};

// verify() over columns [first, first + count) of a view; a column not held is bad.
template <typename T>
VerifyResult verify_columns(const ColumnsView<T> &v, uint64_t first, uint64_t count,
                            const VerifyOptions &options = VerifyOptions());

// Reference value of C(row, col) in long double, and sum_k |a_ik * b_kj| in *abs_sum.
template <typename T>
long double reference_entry(const Problem<T> &p, uint64_t row, uint64_t col, long double *abs_sum);

// The same from A (m x k) and one column of B.
template <typename T>
long double reference_dot(const T *a, uint64_t m, uint64_t k, const T *b_col, uint64_t row, long double *abs_sum);

// The acceptance tolerance for an entry whose terms have absolute sum abs_sum.
template <typename T> long double tolerance(uint64_t k, long double abs_sum);

extern template struct Problem<float>;
extern template struct Problem<double>;

}  // namespace hetpu::matmul
