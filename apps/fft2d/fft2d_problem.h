// SPDX-License-Identifier: LGPL-2.1-or-later
// The matrix of one fft2d run, the transposition between its two phases, and the
// verification against one FFTW 2D transform of the whole matrix. Pure C++ (FFTW, no
// StarPU). Storage is row-major, so the rows [offset, offset + count) are one contiguous
// slice of count x cols elements.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace hetpu::fft2d {

using Complex = std::complex<double>;

struct Problem {
    // Deterministic pseudo-random input in [-1, 1) + i[-1, 1) from seed; data = input.
    Problem(uint64_t rows, uint64_t cols, uint64_t seed);
    void reset();  // data = input again (before each repetition)

    uint64_t rows, cols;
    std::vector<Complex> input;    // kept for verification
    std::vector<Complex> data;     // transformed in place
    std::vector<Complex> scratch;  // the transposed matrix between the phases
};

// dst (cols x rows) = transpose of src (rows x cols), cache-blocked.
void transpose(const Complex *src, uint64_t rows, uint64_t cols, Complex *dst);

struct VerifyResult {
    double max_abs_error = 0;  // max |data - reference|
    double max_abs_ref = 0;    // max |reference|
    double tolerance = 0;      // accepted max_abs_error
    uint64_t bad = 0;          // entries over the tolerance or not finite
    uint64_t first_bad = 0;    // row-major index of the first bad entry
    bool ok() const { return bad == 0; }
};

// Compares p.data with FFTW's forward 2D transform of p.input (FFTW_ESTIMATE plan). The
// tolerance is 1e-10 x max|reference| x log2(rows x cols): the error of any stable FFT
// grows with log n times the unit roundoff, and 1e-10 leaves room for every library here
// while catching a missing, repeated or misplaced row (errors of order max|reference|).
VerifyResult verify(const Problem &p);

}  // namespace hetpu::fft2d
