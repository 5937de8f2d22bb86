// SPDX-License-Identifier: LGPL-2.1-or-later
// OpenCL implementation of the grn block codelet: one work-item per (target, lane), each
// running grn_lane_best() from grn_score.h, whose text is compiled into the program
// (grn_score_cl.inc is generated from the header at build time), so the OpenCL device
// runs exactly the CPU codelet's floating-point operations.
#include "config.h"

#ifdef HETPU_HAVE_OPENCL

#include <starpu.h>

#include <string>

#include "apps/common/opencl_kernels.h"
#include "apps/grn/grn_kernels.h"
#include "apps/grn/grn_search.h"

namespace {

const char *kScoreSource =
#include "apps/grn/grn_score_cl.inc"
    ;

const char *kKernelSource = R"CLC(
__kernel void grn_block(__global const uchar *levels, ulong lev_off, __global const double *xlogx, ulong x_off,
                        __global const double *hy, ulong h_off, __global double *out, ulong o_off,
                        uint genes, uint samples, uint lag, uint k, uint lanes, double alpha,
                        ulong offset, ulong count)
{
    const ulong id = get_global_id(0);
    if (id >= (ulong)genes * lanes)
        return;
    const uint t = (uint)(id / lanes), g = (uint)(id % lanes);
    ulong first, n;
    grn_lane_range(count, lanes, g, &first, &n);
    double score, rank;
    grn_lane_best(levels + lev_off, genes, samples, lag, k, xlogx + x_off, hy[h_off + t], alpha, t, offset + first, n,
                  &score, &rank);
    out[o_off + id] = score;
    out[o_off + (ulong)genes * lanes + id] = rank;
}
)CLC";

hetpu::apps::OpenclKernels kernels;

}  // namespace

extern "C" int hetpu_grn_opencl_init(void)
{
    const std::string source = std::string("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
                                           "#pragma OPENCL FP_CONTRACT OFF\n") +
                               kScoreSource + kKernelSource;
    return kernels.load(source.c_str());
}

extern "C" void hetpu_grn_opencl_shutdown(void) { kernels.unload(); }

extern "C" void hetpu_grn_opencl_block(void *buffers[], void *arg)
{
    const auto *a = static_cast<const hetpu::grn::BlockArgs *>(arg);
    cl_mem levels = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[0]));
    cl_mem xlogx = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[1]));
    cl_mem hy = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[2]));
    cl_mem out = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[3]));
    cl_ulong lev_off = STARPU_VECTOR_GET_OFFSET(buffers[0]);
    cl_ulong x_off = STARPU_VECTOR_GET_OFFSET(buffers[1]) / sizeof(double);
    cl_ulong h_off = STARPU_VECTOR_GET_OFFSET(buffers[2]) / sizeof(double);
    cl_ulong o_off = STARPU_VECTOR_GET_OFFSET(buffers[3]) / sizeof(double);
    cl_uint genes = a->genes, samples = a->samples, lag = a->lag, k = a->k, lanes = a->lanes;
    cl_double alpha = a->alpha;
    cl_ulong offset = a->offset, count = a->count;

    cl_command_queue queue;
    cl_kernel kernel = kernels.kernel("grn_block", queue);
    hetpu::apps::set_kernel_args(kernel, levels, lev_off, xlogx, x_off, hy, h_off, out, o_off, genes, samples, lag, k,
                                 lanes, alpha, offset, count);
    const size_t local = 32;
    const size_t items = static_cast<size_t>(genes) * lanes;
    size_t global = (items + local - 1) / local * local;
    hetpu::apps::OpenclKernels::check(
        clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    // StarPU 1.3 runs OpenCL codelets synchronously: the results must be there on return.
    hetpu::apps::OpenclKernels::check(clFinish(queue));
    starpu_opencl_release_kernel(kernel);
}

#endif  // HETPU_HAVE_OPENCL
