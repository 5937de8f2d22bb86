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

/* Every device sums a block's partial result in the same order, so that the results stay
 * bit-identical: the points are cut into chunks of consecutive points, each chunk is summed
 * in point order from zero, and the chunks' sums are added in chunk order. The chunks are
 * what a GPU spreads over its cores (one serial pass over a block's points left an H100
 * 45x slower than 15 CPU cores). The chunk size depends on the block's point count alone,
 * and a block has at most HETPU_KMEANS_MAX_CHUNKS chunks (the GPU kernels keep one sum per
 * chunk in shared memory). */
#define HETPU_KMEANS_MIN_CHUNK 1024u
#define HETPU_KMEANS_MAX_CHUNKS 4096u
static inline uint64_t hetpu_kmeans_chunk_points(uint64_t count)
{
    const uint64_t c = (count + HETPU_KMEANS_MAX_CHUNKS - 1) / HETPU_KMEANS_MAX_CHUNKS;
    return c < HETPU_KMEANS_MIN_CHUNK ? HETPU_KMEANS_MIN_CHUNK : c;
}

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
