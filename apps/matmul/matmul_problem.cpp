// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/matmul/matmul_problem.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "apps/common/splitmix.h"

namespace hetpu::matmul {

namespace {

template <typename T> void fill_random(std::vector<T> &v, uint64_t seed)
{
    apps::SplitMix64 rng{seed};
    for (T &x : v)
        x = static_cast<T>(rng.symmetric());
}

}  // namespace

template <typename T>
Problem<T>::Problem(uint64_t m_, uint64_t n_, uint64_t k_, uint64_t seed_)
    : m(m_), n(n_), k(k_), seed(seed_), a(m_ * k_), b(k_ * n_), c(m_ * n_)
{
    // Distinct streams for A and B so that A != B even when m = n = k.
    fill_random(a, seed * 2 + 1);
    fill_random(b, seed * 2 + 2);
    reset_c();
}

template <typename T> void Problem<T>::reset_c() { std::fill(c.begin(), c.end(), std::numeric_limits<T>::quiet_NaN()); }

template <typename T>
long double reference_dot(const T *a, uint64_t m, uint64_t k, const T *b_col, uint64_t row, long double *abs_sum)
{
    long double sum = 0, abs = 0;
    for (uint64_t kk = 0; kk < k; ++kk) {
        long double term = static_cast<long double>(a[row + kk * m]) * static_cast<long double>(b_col[kk]);
        sum += term;
        abs += std::fabs(term);
    }
    if (abs_sum)
        *abs_sum = abs;
    return sum;
}

template <typename T> long double reference_entry(const Problem<T> &p, uint64_t row, uint64_t col, long double *abs_sum)
{
    return reference_dot(p.a.data(), p.m, p.k, p.b.data() + col * p.k, row, abs_sum);
}

template <typename T> long double tolerance(uint64_t k, long double abs_sum)
{
    // The long double reference itself errs by about k * eps(long double) * abs_sum,
    // far below this bound; "tiny" keeps an all-zero row/column acceptable.
    const long double eps = std::numeric_limits<T>::epsilon();
    const long double tiny = 4.0L * std::numeric_limits<T>::min();
    return 2.0L * static_cast<long double>(k) * eps * abs_sum + tiny;
}

template <typename T>
VerifyResult verify_columns(const ColumnsView<T> &v, uint64_t first, uint64_t count, const VerifyOptions &options)
{
    VerifyResult r;
    auto record_bad = [&r](uint64_t row, uint64_t col) {
        if (r.bad++ == 0) {
            r.first_bad_row = row;
            r.first_bad_col = col;
        }
    };
    auto mark_infinite = [&r] {
        r.worst_rel_error = std::numeric_limits<double>::infinity();
        r.worst_tol_ratio = std::numeric_limits<double>::infinity();
    };

    // 1. Full scan: cheap (m*n compares) next to the product (2*m*n*k flops).
    for (uint64_t j = first; j < first + count; ++j) {
        const T *c = v.c_col(j);
        if (!c || !v.b_col(j)) {  // a column this rank should hold and does not
            record_bad(0, j);
            mark_infinite();
            continue;
        }
        for (uint64_t i = 0; i < v.m; ++i)
            if (!std::isfinite(c[i])) {
                record_bad(i, j);
                mark_infinite();
            }
    }

    // 2. Sampled reference checks. Non-finite entries were counted above already.
    auto check = [&](uint64_t i, uint64_t j) {
        const T *c_col = v.c_col(j);
        const T *b_col = v.b_col(j);
        if (!c_col || !b_col || !std::isfinite(c_col[i]))
            return;
        const T c = c_col[i];
        ++r.checked;
        long double abs_sum = 0;
        const long double ref = reference_dot(v.a, v.m, v.k, b_col, i, &abs_sum);
        const long double err = std::fabs(static_cast<long double>(c) - ref);
        const long double tol = tolerance<T>(v.k, abs_sum);
        const long double scale = std::max(abs_sum, static_cast<long double>(std::numeric_limits<T>::min()));
        r.worst_rel_error = std::max(r.worst_rel_error, static_cast<double>(err / scale));
        r.worst_tol_ratio = std::max(r.worst_tol_ratio, static_cast<double>(err / tol));
        if (!(err <= tol))
            record_bad(i, j);
    };

    apps::SplitMix64 rng{v.seed ^ 0x5eed5eed5eed5eedull ^ first};
    const uint64_t per_column = options.rows_per_column;
    std::vector<uint64_t> rows;
    for (uint64_t j = first; j < first + count; ++j) {
        if (per_column >= v.m) {
            for (uint64_t i = 0; i < v.m; ++i)
                check(i, j);
            continue;
        }
        // per_column < m distinct rows: rejection terminates quickly since the set is small.
        rows.clear();
        while (rows.size() < per_column) {
            uint64_t i = rng.below(v.m);
            if (std::find(rows.begin(), rows.end(), i) == rows.end())
                rows.push_back(i);
        }
        for (uint64_t i : rows)
            check(i, j);
    }
    for (uint64_t s = 0; count > 0 && s < options.extra_samples; ++s) {
        uint64_t i = rng.below(v.m);
        uint64_t j = first + rng.below(count);
        check(i, j);
    }
    return r;
}

template <typename T> VerifyResult verify(const Problem<T> &p, const VerifyOptions &options)
{
    ColumnsView<T> v;
    v.m = p.m;
    v.k = p.k;
    v.seed = p.seed;
    v.a = p.a.data();
    v.b_col = [&p](uint64_t j) { return p.b.data() + j * p.k; };
    v.c_col = [&p](uint64_t j) { return p.c.data() + j * p.m; };
    return verify_columns(v, 0, p.n, options);
}

template struct Problem<float>;
template struct Problem<double>;
template VerifyResult verify<float>(const Problem<float> &, const VerifyOptions &);
template VerifyResult verify<double>(const Problem<double> &, const VerifyOptions &);
template VerifyResult verify_columns<float>(const ColumnsView<float> &, uint64_t, uint64_t, const VerifyOptions &);
template VerifyResult verify_columns<double>(const ColumnsView<double> &, uint64_t, uint64_t, const VerifyOptions &);
template long double reference_dot<float>(const float *, uint64_t, uint64_t, const float *, uint64_t, long double *);
template long double reference_dot<double>(const double *, uint64_t, uint64_t, const double *, uint64_t, long double *);
template long double reference_entry<float>(const Problem<float> &, uint64_t, uint64_t, long double *);
template long double reference_entry<double>(const Problem<double> &, uint64_t, uint64_t, long double *);
template long double tolerance<float>(uint64_t, long double);
template long double tolerance<double>(uint64_t, long double);

}  // namespace hetpu::matmul
