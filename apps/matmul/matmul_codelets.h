// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU codelets of the matmul app: one per precision, three STARPU_MATRIX buffers
// (A: R, B block: R, C block: W), implementations for every device kind hetpu was built
// with, and a history-based performance model so that dmda and friends can calibrate.
#pragma once

#include <starpu.h>

#include "apps/matmul/matmul_options.h"

namespace hetpu::matmul {

// Once, after hetpu_init(): OpenBLAS to one thread per call (each StarPU CPU worker is
// one core) and, with CUDA codelets, cuBLAS handles on every CUDA worker.
void codelets_init();

// Before hetpu_shutdown() (releases the cuBLAS handles).
void codelets_shutdown();

struct starpu_codelet *codelet(Precision precision);

// Options::clblast_min_indirect for the OpenCL codelets (nothing without OpenCL).
void set_clblast_min_indirect(uint64_t size);

}  // namespace hetpu::matmul
