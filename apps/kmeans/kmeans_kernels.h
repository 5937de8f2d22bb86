// SPDX-License-Identifier: LGPL-2.1-or-later
/* The per-device implementations behind the kmeans assignment codelet. Buffers: the
 * block's points (STARPU_VECTOR of count*d doubles, R), the centroids (STARPU_VECTOR of
 * k*d doubles, R), the block's partial result (STARPU_VECTOR of k*d + k + 1 doubles:
 * sums, counts, inertia; W) and the block's labels (STARPU_VECTOR of count int32, W).
 * cl_arg: struct hetpu_kmeans_args. */
#ifndef HETPU_KMEANS_KERNELS_H
#define HETPU_KMEANS_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hetpu_kmeans_args {
    uint32_t k, d;
};

/* CPU, OpenMP parallel task (kmeans_codelets.cpp). */
void hetpu_kmeans_cpu_assign(void *buffers[], void *arg);
/* OpenCL (kmeans_opencl.cpp, built when HETPU_HAVE_OPENCL). */
void hetpu_kmeans_opencl_assign(void *buffers[], void *arg);
int hetpu_kmeans_opencl_init(void);
void hetpu_kmeans_opencl_shutdown(void);
/* CUDA (kmeans_cuda.cu, registered when HETPU_HAVE_CUDA). */
void hetpu_kmeans_cuda_assign(void *buffers[], void *arg);
/* Launches both kernels on a stream (void * = cudaStream_t); always built by nvcc. */
int hetpu_kmeans_cuda_launch(void *stream, const double *x, uint64_t count, const double *centroids, uint32_t k,
                             uint32_t d, double *partial, int32_t *labels);

#ifdef __cplusplus
}
#endif

#endif
