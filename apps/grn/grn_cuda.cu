// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA implementation of the grn block codelet: one thread per (target, lane) running
// grn_lane_best() from grn_score.h (its arithmetic uses __d*_rn, so nvcc does not contract
// it into FMA and the scores equal the CPU codelet's bit for bit). Always compiled when
// nvcc exists; the StarPU entry point exists only when StarPU has CUDA.
#include <cuda_runtime.h>
#include <starpu.h>

#include "apps/grn/grn_kernels.h"
#include "apps/grn/grn_score.h"

namespace {

__global__ void grn_block_kernel(const uint8_t *levels, const double *xlogx, const double *hy, double *out,
                                 uint32_t genes, uint32_t samples, uint32_t lag, uint32_t k, uint32_t lanes,
                                 double alpha, uint64_t offset, uint64_t count)
{
    const uint64_t id = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    if (id >= static_cast<uint64_t>(genes) * lanes)
        return;
    const uint32_t t = static_cast<uint32_t>(id / lanes), g = static_cast<uint32_t>(id % lanes);
    grn_u64 first, n;
    grn_lane_range(count, lanes, g, &first, &n);
    double score, rank;
    grn_lane_best(levels, genes, samples, lag, k, xlogx, hy[t], alpha, t, offset + first, n, &score, &rank);
    out[id] = score;
    out[static_cast<uint64_t>(genes) * lanes + id] = rank;
}

}  // namespace

extern "C" int hetpu_grn_cuda_launch(void *stream, const uint8_t *levels, const double *xlogx, const double *hy,
                                     double *out, uint32_t genes, uint32_t samples, uint32_t lag, uint32_t k,
                                     uint32_t lanes, double alpha, uint64_t offset, uint64_t count)
{
    const unsigned threads = 128;
    const uint64_t items = static_cast<uint64_t>(genes) * lanes;
    grn_block_kernel<<<static_cast<unsigned>((items + threads - 1) / threads), threads, 0,
                       static_cast<cudaStream_t>(stream)>>>(levels, xlogx, hy, out, genes, samples, lag, k, lanes,
                                                            alpha, offset, count);
    return static_cast<int>(cudaGetLastError());
}

#ifdef STARPU_USE_CUDA
#include "apps/grn/grn_search.h"

extern "C" void hetpu_grn_cuda_block(void *buffers[], void *arg)
{
    const auto *a = static_cast<const hetpu::grn::BlockArgs *>(arg);
    int rc = hetpu_grn_cuda_launch(starpu_cuda_get_local_stream(),
                                   reinterpret_cast<const uint8_t *>(STARPU_VECTOR_GET_PTR(buffers[0])),
                                   reinterpret_cast<const double *>(STARPU_VECTOR_GET_PTR(buffers[1])),
                                   reinterpret_cast<const double *>(STARPU_VECTOR_GET_PTR(buffers[2])),
                                   reinterpret_cast<double *>(STARPU_VECTOR_GET_PTR(buffers[3])), a->genes, a->samples,
                                   a->lag, a->k, a->lanes, a->alpha, a->offset, a->count);
    if (rc != cudaSuccess)
        STARPU_CUDA_REPORT_ERROR(static_cast<cudaError_t>(rc));
}
#endif
