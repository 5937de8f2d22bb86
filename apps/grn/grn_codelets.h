// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU codelet of the grn search: one block of candidate subsets scored against every
// target. CPU (OpenMP parallel task), OpenCL and CUDA implementations share the scoring
// code of grn_score.h and give bit-identical results.
#pragma once

#include <starpu.h>

namespace hetpu::grn {

// Once after hetpu_init() (compiles the OpenCL program); returns 0 or -errno.
int codelets_init();
void codelets_shutdown();
struct starpu_codelet *block_codelet();

}  // namespace hetpu::grn
