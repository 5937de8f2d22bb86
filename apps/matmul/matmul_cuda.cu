// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA implementation of the matmul codelets: cuBLAS GEMM on StarPU's per-worker cuBLAS
// handle and stream. Always compiled when nvcc is found (so toolkit breakage shows up at
// build time); the StarPU entry points exist only when StarPU itself has CUDA, and the
// codelets register them only then (HETPU_HAVE_CUDA).
#include <cublas_v2.h>
#include <starpu.h>

#include "apps/matmul/matmul_kernels.h"

extern "C" int hetpu_matmul_cublas_sgemm(void *handle, int m, int n, int k, const float *a, int lda, const float *b,
                                         int ldb, float *c, int ldc)
{
    const float one = 1.0f, zero = 0.0f;  // beta = 0: C (mode W) is not read
    return static_cast<int>(cublasSgemm(static_cast<cublasHandle_t>(handle), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a,
                                        lda, b, ldb, &zero, c, ldc));
}

extern "C" int hetpu_matmul_cublas_dgemm(void *handle, int m, int n, int k, const double *a, int lda, const double *b,
                                         int ldb, double *c, int ldc)
{
    const double one = 1.0, zero = 0.0;
    return static_cast<int>(cublasDgemm(static_cast<cublasHandle_t>(handle), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a,
                                        lda, b, ldb, &zero, c, ldc));
}

#ifdef STARPU_USE_CUDA
#include <starpu_cublas_v2.h>

#include "apps/matmul/gemm_shape.h"

namespace {

template <typename T> void cuda_gemm(void *buffers[])
{
    const T *a = reinterpret_cast<const T *>(STARPU_MATRIX_GET_PTR(buffers[0]));
    const T *b = reinterpret_cast<const T *>(STARPU_MATRIX_GET_PTR(buffers[1]));
    T *c = reinterpret_cast<T *>(STARPU_MATRIX_GET_PTR(buffers[2]));
    const hetpu::matmul::GemmShape g = hetpu::matmul::gemm_shape(buffers);

    cublasHandle_t handle = starpu_cublas_get_local_handle();
    // The codelet is STARPU_CUDA_ASYNC: queue on the worker's stream, StarPU waits for it.
    cublasSetStream(handle, starpu_cuda_get_local_stream());
    int status;
    if constexpr (sizeof(T) == sizeof(float))
        status = hetpu_matmul_cublas_sgemm(handle, g.m, g.n, g.k, a, g.lda, b, g.ldb, c, g.ldc);
    else
        status = hetpu_matmul_cublas_dgemm(handle, g.m, g.n, g.k, a, g.lda, b, g.ldb, c, g.ldc);
    if (status != CUBLAS_STATUS_SUCCESS)
        STARPU_CUBLAS_REPORT_ERROR(static_cast<cublasStatus_t>(status));
}

}  // namespace

extern "C" void hetpu_matmul_cuda_sgemm(void *buffers[], void *) { cuda_gemm<float>(buffers); }
extern "C" void hetpu_matmul_cuda_dgemm(void *buffers[], void *) { cuda_gemm<double>(buffers); }

#endif  // STARPU_USE_CUDA
