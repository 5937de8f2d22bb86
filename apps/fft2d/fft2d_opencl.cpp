// SPDX-License-Identifier: LGPL-2.1-or-later
// OpenCL implementation of the fft2d row codelet: clFFT batched 1D transforms in place on
// the buffer StarPU placed on the worker's device. Built only with clFFT
// (HETPU_HAVE_CLFFT). StarPU 1.3 runs OpenCL codelets synchronously, so the transform
// has finished when we return.
#include "config.h"

#ifdef HETPU_HAVE_CLFFT

// starpu.h first: it sets CL_TARGET_OPENCL_VERSION before the OpenCL headers are read.
#include <starpu.h>
#include <clFFT.h>

#include <cerrno>
#include <cstdio>
#include <map>
#include <mutex>
#include <tuple>

#include "apps/fft2d/fft2d_kernels.h"

namespace {

// Baked plans by (device, row length, rows per block): baking compiles kernels, so it is
// done once per block shape and device. clFFT's plan creation is not documented as
// thread-safe: one lock around the cache (each OpenCL worker is one thread anyway).
std::mutex plans_mutex;
std::map<std::tuple<int, uint64_t, uint64_t>, clfftPlanHandle> plans;

[[noreturn]] void die(const char *what, int status, uint64_t length, uint64_t rows)
{
    char worker[64];
    starpu_worker_get_name(starpu_worker_get_id(), worker, sizeof worker);
    STARPU_ABORT_MSG("clFFT %s failed with status %d on %s (rows of %llu, batch %llu; see clfftStatus in clFFT.h)\n",
                     what, status, worker, static_cast<unsigned long long>(length),
                     static_cast<unsigned long long>(rows));
}

clfftPlanHandle plan_for(int devid, cl_command_queue queue, uint64_t length, uint64_t rows)
{
    std::lock_guard<std::mutex> lock(plans_mutex);
    const auto key = std::make_tuple(devid, length, rows);
    if (auto it = plans.find(key); it != plans.end())
        return it->second;
    cl_context context;
    starpu_opencl_get_context(devid, &context);
    clfftPlanHandle plan;
    size_t lengths[1] = {static_cast<size_t>(length)};
    int st = clfftCreateDefaultPlan(&plan, context, CLFFT_1D, lengths);
    if (st != CLFFT_SUCCESS)
        die("clfftCreateDefaultPlan", st, length, rows);
    if ((st = clfftSetPlanPrecision(plan, CLFFT_DOUBLE)) != CLFFT_SUCCESS ||
        (st = clfftSetLayout(plan, CLFFT_COMPLEX_INTERLEAVED, CLFFT_COMPLEX_INTERLEAVED)) != CLFFT_SUCCESS ||
        (st = clfftSetResultLocation(plan, CLFFT_INPLACE)) != CLFFT_SUCCESS ||
        (st = clfftSetPlanBatchSize(plan, static_cast<size_t>(rows))) != CLFFT_SUCCESS ||
        (st = clfftSetPlanDistance(plan, static_cast<size_t>(length), static_cast<size_t>(length))) != CLFFT_SUCCESS)
        die("plan setup", st, length, rows);
    if ((st = clfftBakePlan(plan, 1, &queue, nullptr, nullptr)) != CLFFT_SUCCESS)
        die("clfftBakePlan", st, length, rows);
    plans.emplace(key, plan);
    return plan;
}

}  // namespace

extern "C" int hetpu_fft2d_opencl_setup(void)
{
    clfftSetupData setup;
    int st = clfftInitSetupData(&setup);
    if (st == CLFFT_SUCCESS)
        st = clfftSetup(&setup);
    if (st != CLFFT_SUCCESS) {
        std::fprintf(stderr, "fft2d: clfftSetup failed with status %d\n", st);
        return -EIO;
    }
    return 0;
}

extern "C" void hetpu_fft2d_opencl_teardown(void)
{
    std::lock_guard<std::mutex> lock(plans_mutex);
    for (auto &kv : plans)
        clfftDestroyPlan(&kv.second);
    plans.clear();
    clfftTeardown();
}

extern "C" void hetpu_fft2d_opencl_rows(void *buffers[], void *arg)
{
    const uint64_t length = *static_cast<const uint64_t *>(arg);
    cl_mem buffer = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[0]));
    const size_t offset = STARPU_VECTOR_GET_OFFSET(buffers[0]);  // bytes
    const size_t nx = STARPU_VECTOR_GET_NX(buffers[0]);
    const uint64_t rows = nx / length;
    const int devid = starpu_worker_get_devid(starpu_worker_get_id());
    cl_command_queue queue;
    starpu_opencl_get_current_queue(&queue);
    const clfftPlanHandle plan = plan_for(devid, queue, length, rows);

    // clFFT has no buffer offset, and StarPU builds against OpenCL 1.0 (no sub-buffers):
    // a block that does not start its allocation is copied to a buffer of its own and back.
    // Blocks registered as independent handles (as fft2d_job.cpp does) start at offset 0.
    const size_t bytes = nx * 2 * sizeof(double);
    cl_mem target = buffer, staging = nullptr;
    cl_int err = CL_SUCCESS;
    if (offset != 0) {
        cl_context context;
        starpu_opencl_get_context(devid, &context);
        staging = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
        if (err != CL_SUCCESS)
            STARPU_OPENCL_REPORT_ERROR(err);
        if ((err = clEnqueueCopyBuffer(queue, buffer, staging, offset, 0, bytes, 0, nullptr, nullptr)) != CL_SUCCESS)
            STARPU_OPENCL_REPORT_ERROR(err);
        target = staging;
    }
    const int st =
        clfftEnqueueTransform(plan, CLFFT_FORWARD, 1, &queue, 0, nullptr, nullptr, &target, nullptr, nullptr);
    if (st != CLFFT_SUCCESS)
        die("clfftEnqueueTransform", st, length, rows);
    if (staging &&
        (err = clEnqueueCopyBuffer(queue, staging, buffer, 0, offset, bytes, 0, nullptr, nullptr)) != CL_SUCCESS)
        STARPU_OPENCL_REPORT_ERROR(err);
    err = clFinish(queue);
    if (staging)
        clReleaseMemObject(staging);
    if (err != CL_SUCCESS)
        STARPU_OPENCL_REPORT_ERROR(err);
}

#endif  // HETPU_HAVE_CLFFT
