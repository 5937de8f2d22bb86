// SPDX-License-Identifier: LGPL-2.1-or-later
/* The per-device implementations behind the grn block codelet. Buffers: the discretised
 * levels (STARPU_VECTOR of genes*samples uint8, R), m ln m (STARPU_VECTOR of doubles, R),
 * H(Y) per target (STARPU_VECTOR of genes doubles, R), and the block's output
 * (STARPU_VECTOR of 2*genes*lanes doubles, W; layout in grn_search.h). cl_arg: BlockArgs. */
#ifndef HETPU_GRN_KERNELS_H
#define HETPU_GRN_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CPU, OpenMP parallel task (grn_codelets.cpp). */
void hetpu_grn_cpu_block(void *buffers[], void *arg);
/* OpenCL (grn_opencl.cpp, built when HETPU_HAVE_OPENCL). */
void hetpu_grn_opencl_block(void *buffers[], void *arg);
int hetpu_grn_opencl_init(void);
void hetpu_grn_opencl_shutdown(void);
/* CUDA (grn_cuda.cu, registered when HETPU_HAVE_CUDA). */
void hetpu_grn_cuda_block(void *buffers[], void *arg);
/* Launch the block kernel on a stream (void * = cudaStream_t); always built by nvcc. */
int hetpu_grn_cuda_launch(void *stream, const uint8_t *levels, const double *xlogx, const double *hy, double *out,
                          uint32_t genes, uint32_t samples, uint32_t lag, uint32_t k, uint32_t lanes, double alpha,
                          uint64_t offset, uint64_t count);

#ifdef __cplusplus
}
#endif

#endif
