// SPDX-License-Identifier: LGPL-2.1-or-later
// OpenCL implementation of the grn block codelet: one work-item per (target, lane), each
// running grn_lane_best() from grn_score.h, whose text is compiled into the program
// (grn_score_cl.inc is generated from the header at build time), so the OpenCL device
// runs exactly the CPU codelet's floating-point operations.
#include "config.h"

#ifdef HETPU_HAVE_OPENCL

#include <starpu.h>

#include <cerrno>

#include <string>

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

struct starpu_opencl_program program;
bool loaded = false;

void check(cl_int err)
{
    if (err != CL_SUCCESS)
        STARPU_OPENCL_REPORT_ERROR(err);
}

}  // namespace

extern "C" int hetpu_grn_opencl_init(void)
{
    if (loaded || starpu_opencl_worker_get_count() == 0)
        return 0;
    const std::string source = std::string("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
                                           "#pragma OPENCL FP_CONTRACT OFF\n") +
                               kScoreSource + kKernelSource;
    int rc = starpu_opencl_load_opencl_from_string(source.c_str(), &program, nullptr);
    if (rc != 0)
        return rc < 0 ? rc : -EIO;
    loaded = true;
    return 0;
}

extern "C" void hetpu_grn_opencl_shutdown(void)
{
    if (loaded)
        starpu_opencl_unload_opencl(&program);
    loaded = false;
}

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

    const int devid = starpu_worker_get_devid(starpu_worker_get_id());
    cl_kernel kernel;
    cl_command_queue queue;
    check(starpu_opencl_load_kernel(&kernel, &queue, &program, "grn_block", devid));
    int n = 0;
    check(clSetKernelArg(kernel, n++, sizeof levels, &levels));
    check(clSetKernelArg(kernel, n++, sizeof lev_off, &lev_off));
    check(clSetKernelArg(kernel, n++, sizeof xlogx, &xlogx));
    check(clSetKernelArg(kernel, n++, sizeof x_off, &x_off));
    check(clSetKernelArg(kernel, n++, sizeof hy, &hy));
    check(clSetKernelArg(kernel, n++, sizeof h_off, &h_off));
    check(clSetKernelArg(kernel, n++, sizeof out, &out));
    check(clSetKernelArg(kernel, n++, sizeof o_off, &o_off));
    check(clSetKernelArg(kernel, n++, sizeof genes, &genes));
    check(clSetKernelArg(kernel, n++, sizeof samples, &samples));
    check(clSetKernelArg(kernel, n++, sizeof lag, &lag));
    check(clSetKernelArg(kernel, n++, sizeof k, &k));
    check(clSetKernelArg(kernel, n++, sizeof lanes, &lanes));
    check(clSetKernelArg(kernel, n++, sizeof alpha, &alpha));
    check(clSetKernelArg(kernel, n++, sizeof offset, &offset));
    check(clSetKernelArg(kernel, n++, sizeof count, &count));
    const size_t local = 32;
    const size_t items = static_cast<size_t>(genes) * lanes;
    size_t global = (items + local - 1) / local * local;
    check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr));
    // StarPU 1.3 runs OpenCL codelets synchronously: the results must be there on return.
    check(clFinish(queue));
    starpu_opencl_release_kernel(kernel);
}

#endif  // HETPU_HAVE_OPENCL
