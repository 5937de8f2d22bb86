// SPDX-License-Identifier: LGPL-2.1-or-later
// OpenCL implementation of the kmeans assignment codelet: one kernel labels the points
// (one work-item per point), a second sums the block's partial result with one work-group
// per (cluster, dimension) sum, per cluster count and for the inertia, in the chunk order
// of kmeans_kernels.h: the same operations in the same order as the CPU codelet
// (contraction into FMA is switched off), hence bit-identical results.
#include "config.h"

#ifdef HETPU_HAVE_OPENCL

#include <starpu.h>

#include "apps/common/opencl_kernels.h"
#include "apps/kmeans/kmeans_kernels.h"

namespace {

static_assert(HETPU_KMEANS_MAX_CHUNKS == 4096, "kSource's MAX_CHUNKS must match");

const char *kSource = R"CLC(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF
#define MAX_CHUNKS 4096

__kernel void kmeans_assign(__global const double *x, ulong x_off, __global const double *c, ulong c_off,
                            __global int *labels, ulong l_off, ulong count, uint k, uint d)
{
    const ulong i = get_global_id(0);
    if (i >= count)
        return;
    x += x_off + i * d;
    c += c_off;
    int best = 0;
    double best_d = 0;
    for (uint cl = 0; cl < k; ++cl) {
        double s = 0;
        for (uint j = 0; j < d; ++j) {
            const double diff = x[j] - c[cl * d + j];
            s += diff * diff;
        }
        if (cl == 0 || s < best_d) {
            best_d = s;
            best = (int)cl;
        }
    }
    labels[l_off + i] = best;
}

// One work-group per item of the partial result: its work-items sum the chunks, each in
// point order, into local memory; one work-item adds the chunks' sums in chunk order.
__kernel void kmeans_partial(__global const double *x, ulong x_off, __global const double *c, ulong c_off,
                             __global const int *labels, ulong l_off, __global double *partial, ulong p_off,
                             ulong count, uint k, uint d, ulong chunk)
{
    __local double chunk_sum[MAX_CHUNKS];
    const ulong g = get_group_id(0);
    x += x_off;
    c += c_off;
    labels += l_off;
    partial += p_off;
    const ulong kd = (ulong)k * d;
    const ulong chunks = (count + chunk - 1) / chunk;
    for (ulong q = get_local_id(0); q < chunks; q += get_local_size(0)) {
        const ulong lo = q * chunk, hi = lo + chunk < count ? lo + chunk : count;
        double s = 0;
        if (g < kd) {
            const int cl = (int)(g / d);
            const uint j = (uint)(g % d);
            for (ulong i = lo; i < hi; ++i)
                if (labels[i] == cl)
                    s += x[i * d + j];
        } else if (g < kd + k) {
            const int cl = (int)(g - kd);
            for (ulong i = lo; i < hi; ++i)
                if (labels[i] == cl)
                    s += 1.0;
        } else {
            for (ulong i = lo; i < hi; ++i) {
                const int cl = labels[i];
                double s2 = 0;
                for (uint j = 0; j < d; ++j) {
                    const double diff = x[i * d + j] - c[cl * d + j];
                    s2 += diff * diff;
                }
                s += s2;
            }
        }
        chunk_sum[q] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        double t = 0;
        for (ulong q = 0; q < chunks; ++q)
            t += chunk_sum[q];
        partial[g] = t;
    }
}
)CLC";

hetpu::apps::OpenclKernels kernels;

}  // namespace

extern "C" int hetpu_kmeans_opencl_init(void) { return kernels.load(kSource); }

extern "C" void hetpu_kmeans_opencl_shutdown(void) { kernels.unload(); }

extern "C" void hetpu_kmeans_opencl_assign(void *buffers[], void *arg)
{
    const auto *a = static_cast<const hetpu_kmeans_args *>(arg);
    cl_mem x = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[0]));
    cl_mem c = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[1]));
    cl_mem partial = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[2]));
    cl_mem labels = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[3]));
    cl_ulong x_off = STARPU_VECTOR_GET_OFFSET(buffers[0]) / sizeof(double);
    cl_ulong c_off = STARPU_VECTOR_GET_OFFSET(buffers[1]) / sizeof(double);
    cl_ulong p_off = STARPU_VECTOR_GET_OFFSET(buffers[2]) / sizeof(double);
    cl_ulong l_off = STARPU_VECTOR_GET_OFFSET(buffers[3]) / sizeof(int32_t);
    cl_ulong count = STARPU_VECTOR_GET_NX(buffers[3]);
    cl_uint k = a->k, d = a->d;

    cl_command_queue queue;
    cl_kernel assign = kernels.kernel("kmeans_assign", queue);
    cl_kernel sum = kernels.kernel("kmeans_partial", queue);
    hetpu::apps::set_kernel_args(assign, x, x_off, c, c_off, labels, l_off, count, k, d);
    const cl_ulong chunk = hetpu_kmeans_chunk_points(count);
    hetpu::apps::set_kernel_args(sum, x, x_off, c, c_off, labels, l_off, partial, p_off, count, k, d, chunk);

    const size_t local = 64;
    size_t global = (count + local - 1) / local * local;
    hetpu::apps::OpenclKernels::check(
        clEnqueueNDRangeKernel(queue, assign, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    const size_t items = static_cast<size_t>(k) * d + k + 1;
    size_t global2 = items * local;  // one work-group per item
    hetpu::apps::OpenclKernels::check(
        clEnqueueNDRangeKernel(queue, sum, 1, nullptr, &global2, &local, 0, nullptr, nullptr));
    // StarPU 1.3 runs OpenCL codelets synchronously: the results must be there on return.
    hetpu::apps::OpenclKernels::check(clFinish(queue));
    starpu_opencl_release_kernel(assign);
    starpu_opencl_release_kernel(sum);
}

#endif  // HETPU_HAVE_OPENCL
