// SPDX-License-Identifier: LGPL-2.1-or-later
// What one matmul repetition produced: the apps' run record (apps/common/app_record.h) with
// matmul's own keys (m, n, k, the precision, GFLOP/s), and the human summary. Pure C++: the
// StarPU glue converts hetpu's run report into the record.
#pragma once

#include <cstdint>
#include <string>

#include "apps/common/app_record.h"
#include "apps/matmul/matmul_options.h"

namespace hetpu::matmul {

// 2*m*n*k / seconds, in GFLOP/s (0 when seconds <= 0).
double gflops(uint64_t m, uint64_t n, uint64_t k, double seconds);

// Names the record "matmul" and adds the problem: "precision", "m", "n", "k" and "gflops"
// (from the record's makespan). Call after the makespan is set.
void add_problem(apps::AppRecord &r, const Options &o);

// A few lines for people: the run, then one line per worker. reps is the total number of
// repetitions (for "rep 2/5"). Ends with a newline.
std::string summary(const apps::AppRecord &r, const Options &o, unsigned reps);

}  // namespace hetpu::matmul
