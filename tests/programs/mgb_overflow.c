/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An ordinary StarPU program whose OpenCL tasks each need a large vector on the device:
 * on a node where one device is smaller than a task, StarPU's own policies may put a task
 * there and retry eviction forever. The MGB tests run it under mgb, mgb-exact, sa, cg and
 * StarPU's policies, through the preload library (this build: StarPU only) and through
 * hetpu_init() (built with -DWITH_HETPU, which also declares the tasks' launch sizes).
 *
 *   mgb_overflow [--tasks N] [--mib M] [--cpu] [--sleep-ms T] [--hold-until FILE]
 *
 * --cpu gives the codelet a CPU implementation too. --hold-until: each task, its work done,
 * waits until FILE exists (2 minutes at most), so a test can keep several processes' grants
 * on a device at once without depending on timing. Every element must end at 1. */
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef WITH_HETPU
#include <hetpu/gpu_needs.h>
#include <hetpu/hetpu.h>
#endif

static unsigned sleep_ms = 0;
static const char *hold_until = NULL;

static void hold(void)
{
    usleep(sleep_ms * 1000);
    for (unsigned waited_ms = 0; hold_until && access(hold_until, F_OK) != 0; waited_ms += 10) {
        if (waited_ms >= 120000) {
            fprintf(stderr, "mgb_overflow: %s did not appear within 2 minutes; going on\n", hold_until);
            return;
        }
        usleep(10000);
    }
}

static void add_one_cpu(void *buffers[], void *arg)
{
    (void)arg;
    float *x = (float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
    for (unsigned i = 0; i < n; i++)
        x[i] += 1.0f;
    hold();
}

#ifdef STARPU_USE_OPENCL
static struct starpu_opencl_program program;
static const char *source = "__kernel void add_one(__global float *x, unsigned offset, unsigned n)\n"
                            "{ unsigned i = get_global_id(0); if (i < n) x[offset + i] += 1.0f; }\n";

static void add_one_opencl(void *buffers[], void *arg)
{
    (void)arg;
    cl_mem x = (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(buffers[0]);
    cl_uint offset = STARPU_VECTOR_GET_OFFSET(buffers[0]) / sizeof(float);
    cl_uint n = STARPU_VECTOR_GET_NX(buffers[0]);
    cl_kernel kernel;
    cl_command_queue queue;
    int err = starpu_opencl_load_kernel(&kernel, &queue, &program, "add_one",
                                        starpu_worker_get_devid(starpu_worker_get_id()));
    if (err != CL_SUCCESS)
        STARPU_OPENCL_REPORT_ERROR(err);
    clSetKernelArg(kernel, 0, sizeof x, &x);
    clSetKernelArg(kernel, 1, sizeof offset, &offset);
    clSetKernelArg(kernel, 2, sizeof n, &n);
    size_t global = (n + 255) / 256 * 256, local = 256;
    cl_event event;
    err = clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, &event);
    if (err != CL_SUCCESS)
        STARPU_OPENCL_REPORT_ERROR(err);
    clWaitForEvents(1, &event);
    clReleaseEvent(event);
    starpu_opencl_release_kernel(kernel);
    hold();
}
#endif

static struct starpu_codelet cl = {
#ifdef STARPU_USE_OPENCL
    .opencl_funcs = {add_one_opencl},
#endif
    .nbuffers = 1,
    .modes = {STARPU_RW},
    .name = "mgb_overflow_add_one",
};

#ifdef WITH_HETPU
/* One work-item per element in work-groups of 256, as add_one_opencl launches it. */
static void launch_needs(struct starpu_task *task, struct hetpu_gpu_needs *needs)
{
    size_t n = starpu_vector_get_nx(STARPU_TASK_GET_HANDLE(task, 0));
    needs->blocks = (unsigned)((n + 255) / 256);
    needs->threads_per_block = 256;
}
#endif

int main(int argc, char **argv)
{
    unsigned ntasks = 16, mib = 12;
    int cpu = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tasks") && i + 1 < argc)
            ntasks = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mib") && i + 1 < argc)
            mib = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sleep-ms") && i + 1 < argc)
            sleep_ms = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--hold-until") && i + 1 < argc)
            hold_until = argv[++i];
        else if (!strcmp(argv[i], "--cpu"))
            cpu = 1;
        else {
            fprintf(stderr, "usage: %s [--tasks N] [--mib M] [--cpu] [--sleep-ms T] [--hold-until FILE]\n", argv[0]);
            return 2;
        }
    }
    if (cpu)
        cl.cpu_funcs[0] = add_one_cpu;
    const size_t n = (size_t)mib * 1024 * 1024 / sizeof(float);

#ifdef WITH_HETPU
    int ret = hetpu_init(NULL);
    hetpu_codelet_set_gpu_needs(&cl, launch_needs);
#else
    int ret = starpu_init(NULL);
#endif
    if (ret == -ENODEV)
        return 77;
    if (ret != 0) {
        fprintf(stderr, "mgb_overflow: cannot start StarPU: %d\n", ret);
        return 1;
    }
#ifdef STARPU_USE_OPENCL
    if (starpu_opencl_worker_get_count() > 0)
        starpu_opencl_load_opencl_from_string(source, &program, NULL);
#endif
    float **x = calloc(ntasks, sizeof *x);
    starpu_data_handle_t *h = calloc(ntasks, sizeof *h);
    for (unsigned t = 0; t < ntasks; t++) {
        x[t] = calloc(n, sizeof(float));
        if (!x[t]) {
            fprintf(stderr, "mgb_overflow: out of memory\n");
            return 1;
        }
        starpu_vector_data_register(&h[t], STARPU_MAIN_RAM, (uintptr_t)x[t], n, sizeof(float));
        ret = starpu_task_insert(&cl, STARPU_RW, h[t], STARPU_NAME, "add_one", 0);
        if (ret != 0) {
            fprintf(stderr, "mgb_overflow: task submission failed: %d\n", ret);
            return 1;
        }
    }
    starpu_task_wait_for_all();
    for (unsigned t = 0; t < ntasks; t++)
        starpu_data_unregister(h[t]);
#ifdef STARPU_USE_OPENCL
    if (starpu_opencl_worker_get_count() > 0)
        starpu_opencl_unload_opencl(&program);
#endif
#ifdef WITH_HETPU
    hetpu_shutdown();
#else
    starpu_shutdown();
#endif
    for (unsigned t = 0; t < ntasks; t++)
        for (size_t i = 0; i < n; i++)
            if (x[t][i] != 1.0f) {
                fprintf(stderr, "mgb_overflow: wrong result in task %u at %zu: %g\n", t, i, x[t][i]);
                return 1;
            }
    printf("mgb_overflow: %u tasks of %u MiB verified\n", ntasks, mib);
    return 0;
}
