// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA implementation of hetpu-heat's codelets (heat_codelets.h): the sweep kernel calls the
// formula of heat_kernels.h, which has no multiply-add for nvcc to contract, so it computes
// the CPU's bits; the copies are device-to-device copies on the worker's stream. Compiled
// whenever nvcc exists; the StarPU entry points exist only when StarPU has CUDA.
#include <cuda_runtime.h>
#include <starpu.h>

#include "apps/heat/heat_kernels.h"

namespace {

__global__ void sweep_kernel(const float *cur, const float *above, const float *below, float *out, hetpu_heat_args a)
{
    const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c < a.cols && r < a.count)
        out[static_cast<uint64_t>(r) * a.cols + c] =
            hetpu_heat_step_cell(cur, above, below, a.first, a.count, a.cols, a.rows, r, c);
}

}  // namespace

// One sweep of the block into `scratch`, then copied back into the block, queued on `stream`.
extern "C" int hetpu_heat_cuda_sweep_launch(void *stream, float *block, const float *above, const float *below,
                                            float *scratch, hetpu_heat_args a)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    const dim3 threads(32, 8);
    const dim3 grid((a.cols + threads.x - 1) / threads.x, (a.count + threads.y - 1) / threads.y);
    sweep_kernel<<<grid, threads, 0, s>>>(block, above, below, scratch, a);
    cudaError_t rc = cudaGetLastError();
    if (rc == cudaSuccess)
        rc = cudaMemcpyAsync(block, scratch, static_cast<size_t>(a.count) * a.cols * sizeof(float),
                             cudaMemcpyDeviceToDevice, s);
    return static_cast<int>(rc);
}

// The block's first and last rows into top and bottom, queued on `stream`.
extern "C" int hetpu_heat_cuda_edges_launch(void *stream, const float *block, uint64_t cells, uint64_t cols, float *top,
                                            float *bottom)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    const size_t row = static_cast<size_t>(cols) * sizeof(float);
    cudaError_t rc = cudaMemcpyAsync(top, block, row, cudaMemcpyDeviceToDevice, s);
    if (rc == cudaSuccess)
        rc = cudaMemcpyAsync(bottom, block + (cells - cols), row, cudaMemcpyDeviceToDevice, s);
    return static_cast<int>(rc);
}

#ifdef STARPU_USE_CUDA
extern "C" void hetpu_heat_cuda_sweep(void *buffers[], void *arg)
{
    const auto *a = static_cast<const hetpu_heat_args *>(arg);
    const int rc = hetpu_heat_cuda_sweep_launch(starpu_cuda_get_local_stream(),
                                                reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[0])),
                                                reinterpret_cast<const float *>(STARPU_VECTOR_GET_PTR(buffers[1])),
                                                reinterpret_cast<const float *>(STARPU_VECTOR_GET_PTR(buffers[2])),
                                                reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[3])), *a);
    if (rc != cudaSuccess)
        STARPU_CUDA_REPORT_ERROR(static_cast<cudaError_t>(rc));
}

extern "C" void hetpu_heat_cuda_edges(void *buffers[], void *)
{
    const int rc = hetpu_heat_cuda_edges_launch(starpu_cuda_get_local_stream(),
                                                reinterpret_cast<const float *>(STARPU_VECTOR_GET_PTR(buffers[0])),
                                                STARPU_VECTOR_GET_NX(buffers[0]), STARPU_VECTOR_GET_NX(buffers[1]),
                                                reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[1])),
                                                reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[2])));
    if (rc != cudaSuccess)
        STARPU_CUDA_REPORT_ERROR(static_cast<cudaError_t>(rc));
}
#endif
