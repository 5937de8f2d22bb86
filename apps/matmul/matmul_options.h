// SPDX-License-Identifier: LGPL-2.1-or-later
// Command line of the matmul app (C = A x B). Pure C++: parsed and unit-tested without
// StarPU. Every rejected input yields one message that names the problem and the fix.
#pragma once

#include <cstdint>
#include <string>

namespace hetpu::matmul {

enum class Precision { Single, Double };

const char *precision_name(Precision p);  // "single" / "double"

// Largest accepted matrix dimension: StarPU 1.3's matrix interface and 32-bit BLAS
// integers both hold dimensions (and leading dimensions) in 32-bit signed-safe values.
constexpr uint64_t kMaxDimension = 0x7fffffffu;

struct Options {
    uint64_t m = 0;  // rows of A and C
    uint64_t n = 0;  // columns of B and C: the divisible dimension
    uint64_t k = 0;  // columns of A, rows of B
    Precision precision = Precision::Double;
    uint64_t block = 0;  // columns per block for fixed-block runs; 0: runtime default
    unsigned reps = 1;
    bool verify = false;
    std::string json_path;  // empty: no JSON file
    uint64_t seed = 42;
    bool help = false;  // -h/--help: print usage, run nothing
};

// Parse argv[1..argc-1]. Returns true on success (also for -h/--help, which sets
// out.help); on failure returns false and sets error to a one-line message such as
// "--block 999999 is larger than n = 1024: give a block of at most 1024 columns".
// -n N alone means a square problem; -m and -k default to n when not given.
bool parse_options(int argc, const char *const argv[], Options &out, std::string &error);

// Usage text (several lines, ends with a newline).
std::string usage(const char *prog);

// Strict unsigned parse shared with the benchmark: decimal digits only, no sign, no
// trailing characters, no overflow, and value in [min, max]. On failure error says
// "<what> '<text>' is not ..." with the accepted range.
bool parse_unsigned(const char *text, const char *what, uint64_t min, uint64_t max, uint64_t &out, std::string &error);

}  // namespace hetpu::matmul
