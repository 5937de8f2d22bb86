// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA implementation of the kmeans assignment codelet: the same two kernels as the
// OpenCL one (labels, then the partial result summed in the chunk order of
// kmeans_kernels.h). nvcc would contract a*b+c into FMA; __dmul_rn/__dadd_rn keep every
// operation separately rounded so the results match the CPU codelet bit for bit. Always compiled when nvcc exists; the
// StarPU entry point exists only when StarPU has CUDA.
#include <cuda_runtime.h>
#include <starpu.h>

#include "apps/kmeans/kmeans_buffers.h"
#include "apps/kmeans/kmeans_kernels.h"

namespace {

__device__ double sq_dist(const double *x, const double *c, uint32_t d)
{
    double s = 0;
    for (uint32_t j = 0; j < d; ++j) {
        const double diff = __dsub_rn(x[j], c[j]);
        s = __dadd_rn(s, __dmul_rn(diff, diff));
    }
    return s;
}

__global__ void assign_kernel(const double *x, uint64_t count, const double *c, uint32_t k, uint32_t d, int32_t *labels)
{
    const uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
    if (i >= count)
        return;
    int32_t best = 0;
    double best_d = 0;
    for (uint32_t cl = 0; cl < k; ++cl) {
        const double s = sq_dist(x + i * d, c + cl * d, d);
        if (cl == 0 || s < best_d) {
            best_d = s;
            best = static_cast<int32_t>(cl);
        }
    }
    labels[i] = best;
}

// One thread block per item of the partial result (a (cluster, dimension) sum, a cluster's
// count, the inertia): its threads sum the chunks (kmeans_kernels.h), each in point order,
// into shared memory, and one thread adds the chunks' sums in chunk order.
__global__ void partial_kernel(const double *x, uint64_t count, const double *c, uint32_t k, uint32_t d,
                               const int32_t *labels, double *partial, uint64_t chunk)
{
    __shared__ double chunk_sum[HETPU_KMEANS_MAX_CHUNKS];
    const uint64_t g = blockIdx.x;
    const uint64_t kd = static_cast<uint64_t>(k) * d;
    const uint64_t chunks = (count + chunk - 1) / chunk;
    for (uint64_t q = threadIdx.x; q < chunks; q += blockDim.x) {
        const uint64_t lo = q * chunk, hi = lo + chunk < count ? lo + chunk : count;
        double s = 0;
        if (g < kd) {
            const int32_t cl = static_cast<int32_t>(g / d);
            const uint32_t j = static_cast<uint32_t>(g % d);
            for (uint64_t i = lo; i < hi; ++i)
                if (labels[i] == cl)
                    s = __dadd_rn(s, x[i * d + j]);
        } else if (g < kd + k) {
            const int32_t cl = static_cast<int32_t>(g - kd);
            for (uint64_t i = lo; i < hi; ++i)
                if (labels[i] == cl)
                    s = __dadd_rn(s, 1.0);
        } else {
            for (uint64_t i = lo; i < hi; ++i)
                s = __dadd_rn(s, sq_dist(x + i * d, c + labels[i] * d, d));
        }
        chunk_sum[q] = s;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0;
        for (uint64_t q = 0; q < chunks; ++q)
            t = __dadd_rn(t, chunk_sum[q]);
        partial[g] = t;
    }
}

}  // namespace

extern "C" int hetpu_kmeans_cuda_launch(void *stream, const double *x, uint64_t count, const double *centroids,
                                        uint32_t k, uint32_t d, double *partial, int32_t *labels)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    const unsigned threads = 128;
    if (count > 0)
        assign_kernel<<<static_cast<unsigned>((count + threads - 1) / threads), threads, 0, s>>>(x, count, centroids, k,
                                                                                                 d, labels);
    const uint64_t items = static_cast<uint64_t>(k) * d + k + 1;
    partial_kernel<<<static_cast<unsigned>(items), 256, 0, s>>>(x, count, centroids, k, d, labels, partial,
                                                                hetpu_kmeans_chunk_points(count));
    return static_cast<int>(cudaGetLastError());
}

#ifdef STARPU_USE_CUDA
extern "C" void hetpu_kmeans_cuda_assign(void *buffers[], void *arg)
{
    const hetpu::kmeans::AssignBuffers b(buffers, arg);
    int rc = hetpu_kmeans_cuda_launch(starpu_cuda_get_local_stream(), b.x, b.count, b.centroids, b.k, b.d, b.partial,
                                      b.labels);
    if (rc != cudaSuccess)
        STARPU_CUDA_REPORT_ERROR(static_cast<cudaError_t>(rc));
}
#endif
