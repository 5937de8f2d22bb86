// SPDX-License-Identifier: LGPL-2.1-or-later
// The GEMM dimensions of one matmul block, read once from the codelet's STARPU_MATRIX
// buffers (A, B block, C block) for every device implementation. StarPU's matrix interface
// calls the contiguous dimension nx (rows, column-major) and the other ny (columns).
#pragma once

#include <starpu.h>

#include <cstddef>

namespace hetpu::matmul {

struct GemmShape {
    int m, n, k;        // C (m x n) = A (m x k) x B (k x n)
    int lda, ldb, ldc;  // leading dimensions, in elements
};

inline GemmShape gemm_shape(void *buffers[])
{
    return {static_cast<int>(STARPU_MATRIX_GET_NX(buffers[0])), static_cast<int>(STARPU_MATRIX_GET_NY(buffers[1])),
            static_cast<int>(STARPU_MATRIX_GET_NY(buffers[0])), static_cast<int>(STARPU_MATRIX_GET_LD(buffers[0])),
            static_cast<int>(STARPU_MATRIX_GET_LD(buffers[1])), static_cast<int>(STARPU_MATRIX_GET_LD(buffers[2]))};
}

}  // namespace hetpu::matmul
