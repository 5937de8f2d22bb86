// SPDX-License-Identifier: LGPL-2.1-or-later
// How a GPU block of rows is cut into the batches its FFT library plans: powers of two of
// at most max_batch rows, largest first. A plan is made per batch size (cufftPlanMany
// allocates and compiles, tens of milliseconds the first time in a process), and a planner
// hands out blocks of ever different row counts, so one plan per block size would plan
// again at nearly every block; powers of two bound the plans to log2(max_batch) + 1 per row
// length, made once per device (fft2d_cuda.cu prepares them when the codelets are set up).
// Header-only and pure: nvcc compiles it into the CUDA codelet, the unit tests check it.
#pragma once

#include <cstdint>
#include <vector>

namespace hetpu::fft2d {

inline std::vector<uint64_t> row_batches(uint64_t rows, uint64_t max_batch)
{
    std::vector<uint64_t> out;
    uint64_t cap = 1;
    while (cap * 2 <= max_batch)
        cap *= 2;  // the largest power of two within max_batch (1 when max_batch < 2)
    while (rows > 0) {
        uint64_t b = cap;
        while (b > rows)
            b /= 2;
        out.push_back(b);
        rows -= b;
    }
    return out;
}

}  // namespace hetpu::fft2d
