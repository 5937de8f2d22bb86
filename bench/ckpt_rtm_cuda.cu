// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA implementations of bench/ckpt_rtm_device's codelets (ckpt_rtm_codelets.h): the same
// integer arithmetic as the CPU and OpenCL ones (ckpt_rtm_kernels.h), hence the same bits.
// Compiled whenever nvcc exists; the StarPU entry points exist only when StarPU has CUDA.
#include <cuda_runtime.h>
#include <starpu.h>

#include "bench/ckpt_rtm_kernels.h"

namespace {

// The tasks' argument, as ckpt_rtm_codelets.cpp lays it out.
struct RtmArgs {
    uint64_t base;
    uint32_t step;
};

__global__ void step_kernel(float *y, uint64_t n, uint64_t base, uint32_t step)
{
    const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    if (i < n)
        y[i] = static_cast<float>(hetpu_rtm_step_value(static_cast<uint32_t>(y[i]), base + i, step));
}

// One thread block: each thread sums a strided share of the digest terms, then a tree in
// shared memory adds the shares (modulo 2^64, so the order does not matter).
__global__ void image_kernel(const float *y, float *image, unsigned long long *digest, uint64_t n, uint64_t base)
{
    __shared__ unsigned long long part[HETPU_RTM_DIGEST_GROUP];
    unsigned long long s = 0;
    for (uint64_t i = threadIdx.x; i < n; i += blockDim.x) {
        image[i] += y[i];
        s += hetpu_rtm_digest_term(__float_as_uint(y[i]), base + i);
    }
    part[threadIdx.x] = s;
    for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
        __syncthreads();
        if (threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
    }
    if (threadIdx.x == 0)
        *digest = part[0];
}

}  // namespace

extern "C" int hetpu_bench_rtm_cuda_step_launch(void *stream, float *y, uint64_t n, uint64_t base, uint32_t step)
{
    const unsigned threads = 256;
    if (n > 0)
        step_kernel<<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0,
                      static_cast<cudaStream_t>(stream)>>>(y, n, base, step);
    return static_cast<int>(cudaGetLastError());
}

extern "C" int hetpu_bench_rtm_cuda_image_launch(void *stream, const float *y, float *image, uint64_t *digest,
                                                 uint64_t n, uint64_t base)
{
    image_kernel<<<1, HETPU_RTM_DIGEST_GROUP, 0, static_cast<cudaStream_t>(stream)>>>(
        y, image, reinterpret_cast<unsigned long long *>(digest), n, base);
    return static_cast<int>(cudaGetLastError());
}

#ifdef STARPU_USE_CUDA
extern "C" void hetpu_bench_rtm_step_finished();  // ckpt_rtm_codelets.cpp

namespace {

// The task is done when its data is: wait for the kernel on the worker's stream.
void finish(int rc, cudaStream_t stream)
{
    if (rc == cudaSuccess)
        rc = static_cast<int>(cudaStreamSynchronize(stream));
    if (rc != cudaSuccess)
        STARPU_CUDA_REPORT_ERROR(static_cast<cudaError_t>(rc));
}

}  // namespace

extern "C" void hetpu_bench_rtm_cuda_step(void *buffers[], void *arg)
{
    const auto *a = static_cast<const RtmArgs *>(arg);
    cudaStream_t stream = starpu_cuda_get_local_stream();
    finish(hetpu_bench_rtm_cuda_step_launch(stream, reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[0])),
                                            STARPU_VECTOR_GET_NX(buffers[0]), a->base, a->step),
           stream);
    hetpu_bench_rtm_step_finished();
}

extern "C" void hetpu_bench_rtm_cuda_image(void *buffers[], void *arg)
{
    const auto *a = static_cast<const RtmArgs *>(arg);
    cudaStream_t stream = starpu_cuda_get_local_stream();
    finish(hetpu_bench_rtm_cuda_image_launch(stream, reinterpret_cast<const float *>(STARPU_VECTOR_GET_PTR(buffers[0])),
                                             reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[1])),
                                             reinterpret_cast<uint64_t *>(STARPU_VECTOR_GET_PTR(buffers[2])),
                                             STARPU_VECTOR_GET_NX(buffers[0]), a->base),
           stream);
}
#endif
