// SPDX-License-Identifier: LGPL-2.1-or-later
// The per-device implementations behind the matmul codelets (StarPU codelet signature:
// buffers are A (R), the B block (R) and the C block (W), all STARPU_MATRIX; C = A x B).
// Each device file defines its own; matmul_codelets.cpp registers those that were built.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/* CPU, OpenBLAS cblas_{s,d}gemm (matmul_codelets.cpp). */
void hetpu_matmul_cpu_sgemm(void *buffers[], void *arg);
void hetpu_matmul_cpu_dgemm(void *buffers[], void *arg);

/* OpenCL, CLBlast (matmul_opencl.cpp, built when HETPU_HAVE_OPENCL). */
void hetpu_matmul_opencl_sgemm(void *buffers[], void *arg);
void hetpu_matmul_opencl_dgemm(void *buffers[], void *arg);
/* The smallest m x n x k (as a cube's side) CLBlast computes with its indirect GEMM kernel,
 * set on each device before its first GEMM (default 128; 0: CLBlast's tuning database). */
void hetpu_matmul_opencl_set_min_indirect(unsigned long long size);

/* CUDA, cuBLAS (matmul_cuda.cu, registered when HETPU_HAVE_CUDA). */
void hetpu_matmul_cuda_sgemm(void *buffers[], void *arg);
void hetpu_matmul_cuda_dgemm(void *buffers[], void *arg);

/* cuBLAS column-major C = A x B on the given cublasHandle_t (passed as void * so this
 * header needs no CUDA header); returns the cublasStatus_t. Always built by nvcc, so a
 * CUDA toolkit change that breaks the call is seen even where StarPU has no CUDA. */
int hetpu_matmul_cublas_sgemm(void *handle, int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                              float *c, int ldc);
int hetpu_matmul_cublas_dgemm(void *handle, int m, int n, int k, const double *a, int lda, const double *b, int ldb,
                              double *c, int ldc);

#ifdef __cplusplus
}
#endif
