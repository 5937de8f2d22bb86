// SPDX-License-Identifier: LGPL-2.1-or-later
// Command line of the fft2d app (forward 2D FFT of an M x N complex double matrix). Pure
// C++: parsed and unit-tested without StarPU.
#pragma once

#include <cstdint>
#include <string>

#include "apps/common/app_options.h"

namespace hetpu::fft2d {

// Largest accepted dimension: StarPU 1.3's vector interface holds a block's element count
// in 32 bits, and a block may be a whole matrix.
constexpr uint64_t kMaxElements = 0x7fffffffu;

// Rows and columns when no size is given: a fraction of a second on a two-core machine.
constexpr uint64_t kDefaultSize = 1024;

struct Options : apps::RunOptions {
    uint64_t m = 0;  // rows (the divisible dimension of the row phase)
    uint64_t n = 0;  // columns (the divisible dimension of the column phase)
};

// Parses argv[1..argc-1]; -n N alone means a square N x N matrix, no size a
// kDefaultSize x kDefaultSize one. Returns false with a one-line message naming the
// option and the problem.
bool parse_options(int argc, const char *const argv[], Options &out, std::string &error);

std::string usage(const char *prog);

}  // namespace hetpu::fft2d
