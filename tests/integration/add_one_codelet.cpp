// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tests/integration/add_one_codelet.h"

#include "config.h"

#include <unistd.h>

namespace {

void add_one_cpu(void *buffers[], void *)
{
    // Sleep (not spin) so a block lasts long enough for the other worker to take blocks
    // too even on a loaded machine, without taking its core away.
    usleep(1000);
    float *y = reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[0]));
    const unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
    for (unsigned i = 0; i < n; ++i)
        y[i] += 1.0f;
}

#ifdef STARPU_USE_OPENCL
struct starpu_opencl_program program;

const char *kSource = "__kernel void add_one(__global float *y, unsigned offset, unsigned n)\n"
                      "{\n"
                      "    unsigned i = get_global_id(0);\n"
                      "    if (i < n) y[offset + i] += 1.0f;\n"
                      "}\n";

void add_one_opencl(void *buffers[], void *)
{
    usleep(1000);  // as on the CPU: both kinds of worker stay busy for a while per block
    cl_mem y = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[0]));
    // Vector children and sub-handles carry a byte offset into the device buffer.
    cl_uint offset = STARPU_VECTOR_GET_OFFSET(buffers[0]) / sizeof(float);
    cl_uint n = STARPU_VECTOR_GET_NX(buffers[0]);
    int devid = starpu_worker_get_devid(starpu_worker_get_id());
    cl_kernel kernel;
    cl_command_queue queue;
    int err = starpu_opencl_load_kernel(&kernel, &queue, &program, "add_one", devid);
    if (err != CL_SUCCESS)
        STARPU_OPENCL_REPORT_ERROR(err);
    clSetKernelArg(kernel, 0, sizeof y, &y);
    clSetKernelArg(kernel, 1, sizeof offset, &offset);
    clSetKernelArg(kernel, 2, sizeof n, &n);
    size_t global = n;
    cl_event event;
    err = clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, &event);
    if (err != CL_SUCCESS)
        STARPU_OPENCL_REPORT_ERROR(err);
    clWaitForEvents(1, &event);
    clReleaseEvent(event);
    starpu_opencl_release_kernel(kernel);
}
#endif

struct starpu_codelet make_codelet()
{
    struct starpu_codelet cl;
    starpu_codelet_init(&cl);
    cl.cpu_funcs[0] = add_one_cpu;
#ifdef STARPU_USE_OPENCL
    cl.opencl_funcs[0] = add_one_opencl;
#endif
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_RW;
    cl.name = "hetpu_test_add_one";
    return cl;
}

}  // namespace

struct starpu_codelet add_one_codelet = make_codelet();

void add_one_codelet_load()
{
#ifdef STARPU_USE_OPENCL
    if (starpu_opencl_worker_get_count() > 0)
        starpu_opencl_load_opencl_from_string(kSource, &program, nullptr);
#endif
}

void add_one_codelet_unload()
{
#ifdef STARPU_USE_OPENCL
    if (starpu_opencl_worker_get_count() > 0)
        starpu_opencl_unload_opencl(&program);
#endif
}
