// SPDX-License-Identifier: LGPL-2.1-or-later
// What one fft2d repetition produced: the apps' run record (apps/common/app_record.h) with
// fft2d's keys, matmul's m, n and k (null: it has no meaning here) so the same tools read
// both, and the human summary. Pure C++.
#pragma once

#include <cstdint>
#include <string>

#include "apps/common/app_record.h"
#include "apps/fft2d/fft2d_options.h"

namespace hetpu::fft2d {

// 5 m n log2(m n) / seconds in GFLOP/s, the customary FFT count (0 when seconds <= 0).
double gflops(uint64_t m, uint64_t n, double seconds);

// Names the record "fft2d" and adds "m", "n", "k" (null) and "gflops" (from the record's
// makespan, which covers both phases and the transpositions).
void add_problem(apps::AppRecord &r, const Options &o);

std::string summary(const apps::AppRecord &r, const Options &o, unsigned reps);

}  // namespace hetpu::fft2d
