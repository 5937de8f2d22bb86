// SPDX-License-Identifier: LGPL-2.1-or-later
// Command line of the fft2d app (forward 2D FFT of an M x N complex double matrix). Pure
// C++: parsed and unit-tested without StarPU.
#pragma once

#include <cstdint>
#include <string>

namespace hetpu::fft2d {

// Largest accepted dimension: StarPU 1.3's vector interface holds a block's element count
// in 32 bits, and a block may be a whole matrix.
constexpr uint64_t kMaxElements = 0x7fffffffu;

struct Options {
    uint64_t m = 0;      // rows (the divisible dimension of the row phase)
    uint64_t n = 0;      // columns (the divisible dimension of the column phase)
    uint64_t block = 0;  // rows per block for fixed-block runs; 0: runtime default
    unsigned reps = 1;
    bool verify = false;
    std::string json_path;
    uint64_t seed = 42;
    bool help = false;
};

// Parses argv[1..argc-1]; -n N alone means a square N x N matrix. Returns false with a
// one-line message naming the problem and the fix.
bool parse_options(int argc, const char *const argv[], Options &out, std::string &error);

std::string usage(const char *prog);

}  // namespace hetpu::fft2d
