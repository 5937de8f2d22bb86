// SPDX-License-Identifier: LGPL-2.1-or-later
// The `hetpu su compare` input: rows "application,perf_ratio" (CPU nodes needed to equal one
// GPU node). '#' starts a comment; a first row "application,perf_ratio" is a header.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "accounting_hook/core/comparison_models.h"

namespace hetpu::accounting {

// Throws std::invalid_argument "SOURCE:LINE: ..." on a malformed row, a non-positive ratio,
// or a file without rows.
std::vector<Benchmark> parse_benchmarks(const std::string &text, const std::string &source);
std::vector<Benchmark> load_benchmarks(const std::string &path);

}  // namespace hetpu::accounting
