// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU codelet of the kmeans assignment step: CPU (OpenMP parallel task), OpenCL and
// CUDA implementations with bit-identical results, and a history-based perfmodel.
#pragma once

#include <starpu.h>

namespace hetpu::kmeans {

// Once after hetpu_init() (compiles the OpenCL program); returns 0 or -errno.
int codelets_init();
void codelets_shutdown();
struct starpu_codelet *assign_codelet();

}  // namespace hetpu::kmeans
