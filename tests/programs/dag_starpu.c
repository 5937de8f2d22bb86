/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A StarPU program that knows nothing about hetpu and uses what real StarPU codes use beyond
 * independent tasks: implicit data dependencies (a long RW chain), tasks of several buffers,
 * an OpenCL-only codelet and a CPU-only one, tag dependencies, priorities, a synchronous task,
 * a task with no buffer, a task submitted from another task's callback, a task pinned to one
 * worker, data acquired by the application between tasks, and a STARPU_REDUX reduction. Every policy must run it to
 * completion with the right results: a policy that drops, duplicates or strands a task makes
 * it fail or hang (the test runs it under `timeout`). Exit 77 when StarPU has no worker. */
#include <starpu.h>
#include <stdio.h>
#include <string.h>

#define N 4096
#define CHAIN 60
#define NSUMS 24
#define REDUX_ROUNDS 3

static void add_one_cpu(void *buffers[], void *arg)
{
    (void)arg;
    double *x = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
    for (unsigned i = 0; i < n; i++)
        x[i] += 1.0;
}

static void sum_cpu(void *buffers[], void *arg)
{
    (void)arg;
    const double *a = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const double *b = (const double *)STARPU_VECTOR_GET_PTR(buffers[1]);
    double *c = (double *)STARPU_VECTOR_GET_PTR(buffers[2]);
    unsigned n = STARPU_VECTOR_GET_NX(buffers[2]);
    for (unsigned i = 0; i < n; i++)
        c[i] = a[i] + b[i];
}

static int have_opencl;
#ifdef DAG_WITH_OPENCL
static struct starpu_opencl_program opencl_program;

static const char *opencl_source =
    "__kernel void add_one(__global double *x, unsigned n)\n"
    "{ size_t i = get_global_id(0); if (i < n) x[i] += 1.0; }\n"
    "__kernel void sum(__global const double *a, __global const double *b, __global double *c, unsigned n)\n"
    "{ size_t i = get_global_id(0); if (i < n) c[i] = a[i] + b[i]; }\n"
    "__kernel void zero(__global double *acc, unsigned n) { acc[0] = 0.0; }\n"
    "__kernel void accumulate(__global double *acc, __global const double *other, unsigned n)\n"
    "{ acc[0] += other[0]; }\n"
    "__kernel void add_sum(__global double *acc, __global const double *x, unsigned n)\n"
    "{ double s = 0.0; for (unsigned i = 0; i < n; i++) s += x[i]; acc[0] += s; }\n";

/* Runs kernel `name` with arguments mems[0..nmem) then n, over `global` work items. */
static void launch(const char *name, const cl_mem *mems, unsigned nmem, unsigned n, size_t global)
{
    int devid = starpu_worker_get_devid(starpu_worker_get_id());
    cl_kernel kernel;
    cl_command_queue queue;
    int err = starpu_opencl_load_kernel(&kernel, &queue, &opencl_program, name, devid);
    if (err != CL_SUCCESS)
        STARPU_OPENCL_REPORT_ERROR(err);
    for (unsigned b = 0; b < nmem; b++)
        err |= clSetKernelArg(kernel, b, sizeof(mems[b]), &mems[b]);
    err |= clSetKernelArg(kernel, nmem, sizeof(n), &n);
    if (err != CL_SUCCESS)
        STARPU_OPENCL_REPORT_ERROR(err);
    cl_event event;
    err = clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, &event);
    if (err != CL_SUCCESS)
        STARPU_OPENCL_REPORT_ERROR(err);
    clFinish(queue);
    starpu_opencl_collect_stats(event);
    clReleaseEvent(event);
    starpu_opencl_release_kernel(kernel);
}

static void run_kernel(const char *name, void *buffers[], unsigned nbuf)
{
    cl_mem mems[3];
    for (unsigned b = 0; b < nbuf; b++)
        mems[b] = (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(buffers[b]);
    unsigned n = STARPU_VECTOR_GET_NX(buffers[nbuf - 1]);
    launch(name, mems, nbuf, n, n);
}

static void zero_opencl(void *buffers[], void *arg)
{
    (void)arg;
    cl_mem acc = (cl_mem)STARPU_VARIABLE_GET_PTR(buffers[0]);
    launch("zero", &acc, 1, 0, 1);
}

static void accumulate_opencl(void *buffers[], void *arg)
{
    (void)arg;
    cl_mem mems[2] = {(cl_mem)STARPU_VARIABLE_GET_PTR(buffers[0]), (cl_mem)STARPU_VARIABLE_GET_PTR(buffers[1])};
    launch("accumulate", mems, 2, 0, 1);
}

static void add_sum_opencl(void *buffers[], void *arg)
{
    (void)arg;
    cl_mem mems[2] = {(cl_mem)STARPU_VARIABLE_GET_PTR(buffers[0]), (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(buffers[1])};
    launch("add_sum", mems, 2, STARPU_VECTOR_GET_NX(buffers[1]), 1);
}

static void add_one_opencl(void *buffers[], void *arg)
{
    (void)arg;
    run_kernel("add_one", buffers, 1);
}

static void sum_opencl(void *buffers[], void *arg)
{
    (void)arg;
    run_kernel("sum", buffers, 3);
}
#define OPENCL_FUNCS(f) .opencl_funcs = {f},
#else
#define OPENCL_FUNCS(f)
#endif

/* Runs anywhere: the policy chooses. */
static struct starpu_codelet add_one_cl = {
    .cpu_funcs = {add_one_cpu},
    OPENCL_FUNCS(add_one_opencl).nbuffers = 1,
    .modes = {STARPU_RW},
    .name = "dag_add_one",
};
/* Only an OpenCL worker can run it: a policy that offers it to the CPU strands it. */
static struct starpu_codelet add_one_opencl_only_cl = {
    OPENCL_FUNCS(add_one_opencl).nbuffers = 1,
    .modes = {STARPU_RW},
    .name = "dag_add_one_opencl",
};
/* Only the CPU can run it. */
static struct starpu_codelet sum_cpu_only_cl = {
    .cpu_funcs = {sum_cpu},
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .name = "dag_sum_cpu",
};
static struct starpu_codelet sum_cl = {
    .cpu_funcs = {sum_cpu},
    OPENCL_FUNCS(sum_opencl).nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .name = "dag_sum",
};
/* A STARPU_REDUX accumulation: each worker adds into its own copy of the scalar, and
 * StarPU combines the copies with tasks it submits itself (the accumulate codelet), which
 * reach the policy's push and pop but never its post_exec_hook. */
static void zero_cpu(void *buffers[], void *arg)
{
    (void)arg;
    *(double *)STARPU_VARIABLE_GET_PTR(buffers[0]) = 0.0;
}
static void accumulate_cpu(void *buffers[], void *arg)
{
    (void)arg;
    *(double *)STARPU_VARIABLE_GET_PTR(buffers[0]) += *(const double *)STARPU_VARIABLE_GET_PTR(buffers[1]);
}
static void add_sum_cpu(void *buffers[], void *arg)
{
    (void)arg;
    const double *x = (const double *)STARPU_VECTOR_GET_PTR(buffers[1]);
    double s = 0.0;
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[1]); i++)
        s += x[i];
    *(double *)STARPU_VARIABLE_GET_PTR(buffers[0]) += s;
}
static struct starpu_codelet zero_cl = {
    .cpu_funcs = {zero_cpu},
    OPENCL_FUNCS(zero_opencl).nbuffers = 1,
    .modes = {STARPU_W},
    .name = "dag_zero",
};
static struct starpu_codelet accumulate_cl = {
    .cpu_funcs = {accumulate_cpu},
    OPENCL_FUNCS(accumulate_opencl).nbuffers = 2,
    .modes = {STARPU_RW, STARPU_R},
    .name = "dag_accumulate",
};
static struct starpu_codelet add_sum_cl = {
    .cpu_funcs = {add_sum_cpu},
    OPENCL_FUNCS(add_sum_opencl).nbuffers = 2,
    .modes = {STARPU_REDUX, STARPU_R},
    .name = "dag_add_sum",
};

static int empty_runs;
static void empty_cpu(void *buffers[], void *arg)
{
    (void)buffers;
    (void)arg;
    __atomic_add_fetch(&empty_runs, 1, __ATOMIC_SEQ_CST);
}
static struct starpu_codelet empty_cl = {
    .cpu_funcs = {empty_cpu},
    .nbuffers = 0,
    .name = "dag_empty",
};

static starpu_data_handle_t callback_handle;
/* Runs in a StarPU worker thread once its task is done: submits another task from there. */
static void submit_from_callback(void *arg)
{
    (void)arg;
    int ret = starpu_task_insert(&add_one_cl, STARPU_RW, callback_handle, 0);
    if (ret != 0)
        fprintf(stderr, "dag_starpu: submission from a callback failed: %d\n", ret);
}

static int check(const char *what, const double *x, double expected)
{
    for (int i = 0; i < N; i++)
        if (x[i] != expected) {
            fprintf(stderr, "dag_starpu: %s: element %d is %g, expected %g\n", what, i, x[i], expected);
            return 1;
        }
    return 0;
}

static int submit(struct starpu_task *task)
{
    int ret = starpu_task_submit(task);
    if (ret != 0)
        fprintf(stderr, "dag_starpu: task submission failed: %d\n", ret);
    return ret;
}

int main(void)
{
    static double chain[N], a[NSUMS][N], b[NSUMS][N], c[NSUMS][N], tagged[N], cb[N], pinned[N], ocl[N];
    int ret = starpu_init(NULL);
    if (ret == -ENODEV)
        return 77;
    if (ret != 0) {
        fprintf(stderr, "dag_starpu: starpu_init failed: %d\n", ret);
        return 1;
    }
#ifdef DAG_WITH_OPENCL
    have_opencl = starpu_opencl_worker_get_count() > 0;
    if (have_opencl && starpu_opencl_load_opencl_from_string(opencl_source, &opencl_program, NULL) != 0) {
        fprintf(stderr, "dag_starpu: cannot build the OpenCL program\n");
        return 1;
    }
#endif
    int fails = 0;

    /* A chain of CHAIN read-write tasks on one handle, alternating priorities. */
    starpu_data_handle_t chain_h;
    starpu_vector_data_register(&chain_h, STARPU_MAIN_RAM, (uintptr_t)chain, N, sizeof(double));
    for (int t = 0; t < CHAIN; t++)
        if (starpu_task_insert(&add_one_cl, STARPU_RW, chain_h, STARPU_PRIORITY, t % 3 - 1, 0) != 0)
            return 1;

    /* Three-buffer tasks, half CPU-only, reading what the application wrote. */
    starpu_data_handle_t ah[NSUMS], bh[NSUMS], ch[NSUMS];
    for (int s = 0; s < NSUMS; s++) {
        for (int i = 0; i < N; i++) {
            a[s][i] = s;
            b[s][i] = 2.0 * i;
        }
        starpu_vector_data_register(&ah[s], STARPU_MAIN_RAM, (uintptr_t)a[s], N, sizeof(double));
        starpu_vector_data_register(&bh[s], STARPU_MAIN_RAM, (uintptr_t)b[s], N, sizeof(double));
        starpu_vector_data_register(&ch[s], STARPU_MAIN_RAM, (uintptr_t)c[s], N, sizeof(double));
        if (starpu_task_insert(s % 2 ? &sum_cpu_only_cl : &sum_cl, STARPU_R, ah[s], STARPU_R, bh[s], STARPU_W, ch[s],
                               0) != 0)
            return 1;
    }

    /* Tag dependencies: task 2 waits for task 1 explicitly (no shared data between them). */
    starpu_data_handle_t tagged_h;
    starpu_vector_data_register(&tagged_h, STARPU_MAIN_RAM, (uintptr_t)tagged, N, sizeof(double));
    starpu_tag_t first = 4242, second = 4243;
    starpu_tag_declare_deps(second, 1, first);
    struct starpu_task *t2 = starpu_task_create();
    t2->cl = &empty_cl;
    t2->use_tag = 1;
    t2->tag_id = second;
    struct starpu_task *t1 = starpu_task_create();
    t1->cl = &add_one_cl;
    t1->handles[0] = tagged_h;
    t1->use_tag = 1;
    t1->tag_id = first;
    if (submit(t2) != 0 || submit(t1) != 0)
        return 1;

    /* A synchronous task: returns only once done. */
    struct starpu_task *sync = starpu_task_create();
    sync->cl = &add_one_cl;
    sync->handles[0] = tagged_h;
    sync->synchronous = 1;
    if (submit(sync) != 0)
        return 1;
    starpu_tag_wait(second);

    /* A callback that submits one more task. */
    starpu_vector_data_register(&callback_handle, STARPU_MAIN_RAM, (uintptr_t)cb, N, sizeof(double));
    if (starpu_task_insert(&add_one_cl, STARPU_RW, callback_handle, STARPU_CALLBACK, submit_from_callback, 0) != 0)
        return 1;

    /* Rounds of a reduction into one scalar over the vectors a[s] (all elements s), read by
     * the application after each round. The OpenCL-only tasks below come after them: a
     * policy that keeps a device reserved for a finished combining task strands those. */
    double total = 0.0;
    starpu_data_handle_t total_h;
    starpu_variable_data_register(&total_h, STARPU_MAIN_RAM, (uintptr_t)&total, sizeof(double));
    starpu_data_set_reduction_methods(total_h, &accumulate_cl, &zero_cl);
    for (int round = 1; round <= REDUX_ROUNDS; round++) {
        for (int s = 0; s < NSUMS; s++)
            if (starpu_task_insert(&add_sum_cl, STARPU_REDUX, total_h, STARPU_R, ah[s], 0) != 0)
                return 1;
        starpu_data_acquire(total_h, STARPU_R);
        const double expected = (double)round * N * (NSUMS * (NSUMS - 1) / 2);
        if (total != expected) {
            fprintf(stderr, "dag_starpu: reduction round %d gave %.17g, expected %.17g\n", round, total, expected);
            fails++;
        }
        starpu_data_release(total_h);
    }

    /* A task pinned to the last worker, and one that only OpenCL can run. */
    starpu_data_handle_t pinned_h, ocl_h;
    starpu_vector_data_register(&pinned_h, STARPU_MAIN_RAM, (uintptr_t)pinned, N, sizeof(double));
    struct starpu_task *pin = starpu_task_create();
    pin->cl = &add_one_cl;
    pin->handles[0] = pinned_h;
    pin->execute_on_a_specific_worker = 1;
    pin->workerid = starpu_worker_get_count() - 1;
    if (submit(pin) != 0)
        return 1;
    starpu_vector_data_register(&ocl_h, STARPU_MAIN_RAM, (uintptr_t)ocl, N, sizeof(double));
    if (have_opencl)
        for (int t = 0; t < 5; t++)
            if (starpu_task_insert(&add_one_opencl_only_cl, STARPU_RW, ocl_h, 0) != 0)
                return 1;

    /* The application reads the chain in the middle of the run, then extends it. */
    starpu_data_acquire(chain_h, STARPU_R);
    fails += check("chain (acquired)", chain, CHAIN);
    starpu_data_release(chain_h);
    for (int t = 0; t < CHAIN; t++)
        if (starpu_task_insert(&add_one_cl, STARPU_RW, chain_h, 0) != 0)
            return 1;

    starpu_task_wait_for_all();
    starpu_data_unregister(chain_h);
    for (int s = 0; s < NSUMS; s++) {
        starpu_data_unregister(ah[s]);
        starpu_data_unregister(bh[s]);
        starpu_data_unregister(ch[s]);
    }
    starpu_data_unregister(tagged_h);
    starpu_data_unregister(total_h);
    starpu_data_unregister(callback_handle);
    starpu_data_unregister(pinned_h);
    starpu_data_unregister(ocl_h);
#ifdef DAG_WITH_OPENCL
    if (have_opencl)
        starpu_opencl_unload_opencl(&opencl_program);
#endif
    starpu_shutdown();

    fails += check("chain", chain, 2 * CHAIN);
    for (int s = 0; s < NSUMS; s++)
        for (int i = 0; i < N; i++)
            if (c[s][i] != s + 2.0 * i) {
                fprintf(stderr, "dag_starpu: sum %d element %d is %g\n", s, i, c[s][i]);
                return 1;
            }
    fails += check("tagged", tagged, 2.0);
    fails += check("callback", cb, 2.0);
    fails += check("pinned", pinned, 1.0);
    fails += check("opencl-only", ocl, have_opencl ? 5.0 : 0.0);
    if (empty_runs != 1) {
        fprintf(stderr, "dag_starpu: the bufferless task ran %d times\n", empty_runs);
        fails++;
    }
    if (fails)
        return 1;
    printf("dag_starpu: all results right\n");
    return 0;
}
