// SPDX-License-Identifier: LGPL-2.1-or-later
// Command line of the matmul app (C = A x B). Pure C++: parsed and unit-tested without
// StarPU. Every rejected input yields one message that names the option and the problem.
#pragma once

#include <cstdint>
#include <string>

#include "apps/common/app_options.h"

namespace hetpu::matmul {

enum class Precision { Single, Double };

const char *precision_name(Precision p);  // "single" / "double"

// Largest accepted matrix dimension: StarPU 1.3's matrix interface and 32-bit BLAS
// integers both hold dimensions (and leading dimensions) in 32-bit signed-safe values.
constexpr uint64_t kMaxDimension = 0x7fffffffu;

// n when no size is given: a fraction of a second on a two-core machine.
constexpr uint64_t kDefaultSize = 1024;

// The smallest GEMM, as the side of a cube of m x n x k, that CLBlast computes with its
// indirect kernel on OpenCL devices (matmul_opencl.cpp says why it is set at all).
constexpr uint64_t kDefaultClblastMinIndirect = 128;

// Block widths are multiples of this many columns by default (n permitting, see
// complete() in matmul_options.cpp): GEMM kernels compute whole tiles of C, and CLBlast's
// indirect kernel pads a block's columns up to its tile, 32 on PoCL here, so a 97-column
// block took as long as a 128-column one (2.63 ms per column against 1.96 at 96).
constexpr uint64_t kDefaultGranule = 32;

struct Options : apps::RunOptions {
    uint64_t m = 0;  // rows of A and C
    uint64_t n = 0;  // columns of B and C: the divisible dimension
    uint64_t k = 0;  // columns of A, rows of B
    Precision precision = Precision::Double;
    uint64_t clblast_min_indirect = kDefaultClblastMinIndirect;  // 0: CLBlast's tuning database decides
    uint64_t granule = 0;  // block widths are multiples of it (but the last); 0 until parsed: the default
    // MiB of B and C columns one process may hold (0: no limit): a rank that would need
    // more fails with ENOMEM, so a run shows whether the problem fits the ranks' memory.
    uint64_t max_columns_mib = 0;
};

// Parse argv[1..argc-1]. Returns true on success (also for -h/--help, which sets
// out.help); on failure returns false and sets error to a one-line message such as
// "--block 999999 is larger than n = 1024: give a block of at most 1024 columns".
// n defaults to kDefaultSize; m and k default to n.
bool parse_options(int argc, const char *const argv[], Options &out, std::string &error);

// Usage text (several lines, ends with a newline).
std::string usage(const char *prog);

}  // namespace hetpu::matmul
