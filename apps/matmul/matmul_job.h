// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue of one matmul repetition: registers A once, hands hetpu's divisible runner
// a fill_task that registers the B and C column blocks of each block it generates.
#pragma once

#include <hetpu/divisible.h>

#include "apps/matmul/matmul_columns.h"
#include "apps/matmul/matmul_options.h"
#include "apps/matmul/matmul_problem.h"

namespace hetpu::matmul {

// Compute p.c = p.a x p.b through hetpu_divisible_run() (StarPU started by hetpu_init()
// and codelets_init() called). The columns of B and C are the divisible elements; the
// fixed block size is options.block (0: the runtime's default; HETPU_BLOCK overrides).
// On return every block has completed and C is back in p.c. Returns 0 or -errno.
template <typename T> int run_once(Problem<T> &p, const Options &options, struct hetpu_divisible_report *out);

// The same with the data owned by the ranks that compute them (hetpu_divisible_run_placed):
// each rank holds A and its share of B's and C's columns; on return its share of C is
// computed (out->share_offset, out->share_count). In a single process the store holds all.
template <typename T> int run_owned(ColumnStore<T> &store, const Options &options, struct hetpu_divisible_report *out);

}  // namespace hetpu::matmul
