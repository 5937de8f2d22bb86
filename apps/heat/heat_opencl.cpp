// SPDX-License-Identifier: LGPL-2.1-or-later
// OpenCL implementation of hetpu-heat's codelets: the sweep kernel spells heat_kernels.h's
// formula (contraction switched off), the copies are buffer copies on the device.
#include "config.h"

#ifdef HETPU_HAVE_OPENCL

#include <starpu.h>

#include "apps/common/opencl_kernels.h"
#include "apps/heat/heat_codelets.h"

namespace {

const char *kSource = R"CLC(
#pragma OPENCL FP_CONTRACT OFF

__kernel void heat_sweep(__global const float *cur, ulong cur_off, __global const float *above, ulong above_off,
                         __global const float *below, ulong below_off, __global float *out, ulong out_off,
                         uint first, uint count, uint cols, uint rows)
{
    const uint c = get_global_id(0), r = get_global_id(1);
    if (c >= cols || r >= count)
        return;
    cur += cur_off;
    above += above_off;
    below += below_off;
    const ulong at = (ulong)r * cols + c;
    const uint g = first + r;
    float v;
    if (g == 0 || g + 1 == rows || c == 0 || c + 1 == cols) {
        v = cur[at];
    } else {
        const float up = r == 0 ? above[c] : cur[at - cols];
        const float down = r + 1 == count ? below[c] : cur[at + cols];
        v = ((up + down) + (cur[at - 1] + cur[at + 1])) * 0.25f;
    }
    out[out_off + at] = v;
}
)CLC";

hetpu::apps::OpenclKernels kernels;

using hetpu::apps::OpenclKernels;

cl_mem mem_of(void *buffer) { return reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffer)); }
size_t byte_offset(void *buffer) { return STARPU_VECTOR_GET_OFFSET(buffer); }
cl_ulong float_offset(void *buffer) { return static_cast<cl_ulong>(STARPU_VECTOR_GET_OFFSET(buffer) / sizeof(float)); }

void copy(cl_command_queue queue, void *from, size_t from_float, void *to, size_t floats)
{
    OpenclKernels::check(clEnqueueCopyBuffer(queue, mem_of(from), mem_of(to),
                                             byte_offset(from) + from_float * sizeof(float), byte_offset(to),
                                             floats * sizeof(float), 0, nullptr, nullptr));
}

}  // namespace

int hetpu_heat_opencl_init() { return kernels.load(kSource); }

void hetpu_heat_opencl_shutdown() { kernels.unload(); }

extern "C" void hetpu_heat_opencl_sweep(void *buffers[], void *arg)
{
    const auto *a = static_cast<const hetpu_heat_args *>(arg);
    cl_command_queue queue;
    cl_kernel k = kernels.kernel("heat_sweep", queue);
    hetpu::apps::set_kernel_args(k, mem_of(buffers[0]), float_offset(buffers[0]), mem_of(buffers[1]),
                                 float_offset(buffers[1]), mem_of(buffers[2]), float_offset(buffers[2]),
                                 mem_of(buffers[3]), float_offset(buffers[3]), a->first, a->count, a->cols, a->rows);
    const size_t global[2] = {a->cols, a->count};
    OpenclKernels::check(clEnqueueNDRangeKernel(queue, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    // The in-order queue runs the copy back after the kernel.
    const size_t cells = static_cast<size_t>(a->count) * a->cols;
    OpenclKernels::check(clEnqueueCopyBuffer(queue, mem_of(buffers[3]), mem_of(buffers[0]), byte_offset(buffers[3]),
                                             byte_offset(buffers[0]), cells * sizeof(float), 0, nullptr, nullptr));
    OpenclKernels::check(clFinish(queue));
    starpu_opencl_release_kernel(k);
}

extern "C" void hetpu_heat_opencl_edges(void *buffers[], void *)
{
    cl_command_queue queue;
    starpu_opencl_get_current_queue(&queue);
    const size_t cols = STARPU_VECTOR_GET_NX(buffers[1]);
    const size_t cells = STARPU_VECTOR_GET_NX(buffers[0]);
    copy(queue, buffers[0], 0, buffers[1], cols);
    copy(queue, buffers[0], cells - cols, buffers[2], cols);
    OpenclKernels::check(clFinish(queue));
}

#endif
