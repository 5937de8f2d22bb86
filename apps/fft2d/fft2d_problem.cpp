// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/fft2d/fft2d_problem.h"

#include <algorithm>
#include <cmath>
#include <fftw3.h>
#include <limits>

#include "apps/common/splitmix.h"

namespace hetpu::fft2d {

Problem::Problem(uint64_t r, uint64_t c, uint64_t seed) : rows(r), cols(c), input(r * c), data(), scratch(r * c)
{
    apps::SplitMix64 rng{seed};
    for (Complex &z : input) {
        const double re = rng.symmetric();
        z = Complex(re, rng.symmetric());
    }
    data = input;
}

void Problem::reset() { data = input; }

void transpose(const Complex *src, uint64_t rows, uint64_t cols, Complex *dst)
{
    constexpr uint64_t tile = 32;
    for (uint64_t i0 = 0; i0 < rows; i0 += tile)
        for (uint64_t j0 = 0; j0 < cols; j0 += tile)
            for (uint64_t i = i0; i < std::min(rows, i0 + tile); ++i)
                for (uint64_t j = j0; j < std::min(cols, j0 + tile); ++j)
                    dst[j * rows + i] = src[i * cols + j];
}

VerifyResult verify(const Problem &p)
{
    std::vector<Complex> ref(p.input);
    auto *z = reinterpret_cast<fftw_complex *>(ref.data());
    fftw_plan plan =
        fftw_plan_dft_2d(static_cast<int>(p.rows), static_cast<int>(p.cols), z, z, FFTW_FORWARD, FFTW_ESTIMATE);
    fftw_execute(plan);
    fftw_destroy_plan(plan);

    VerifyResult v;
    for (const Complex &r : ref)
        v.max_abs_ref = std::max(v.max_abs_ref, std::abs(r));
    const double n = static_cast<double>(p.rows * p.cols);
    v.tolerance = 1e-10 * v.max_abs_ref * std::max(1.0, std::log2(n));
    for (uint64_t i = 0; i < ref.size(); ++i) {
        const double err = std::abs(p.data[i] - ref[i]);
        if (!std::isfinite(err) || err > v.tolerance) {
            if (v.bad++ == 0)
                v.first_bad = i;
        }
        if (std::isfinite(err))
            v.max_abs_error = std::max(v.max_abs_error, err);
        else
            v.max_abs_error = std::numeric_limits<double>::infinity();
    }
    return v;
}

}  // namespace hetpu::fft2d
