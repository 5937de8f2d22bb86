/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An ordinary StarPU program that knows nothing about hetpu: it is linked against StarPU
 * only. The preload test runs it under LD_PRELOAD=libhetpu-preload.so to show that any
 * StarPU program can be put under a hetpu policy by name; the STARPU_SCHED_LIB test runs it
 * under StarPU 1.4's own loader. It prints the policy StarPU runs, as StarPU sees it: a
 * fallback to StarPU's default policy shows there. */
#include <starpu.h>
#include <stdio.h>

#define N 1000
#define NTASKS 50

static void scale_cpu(void *buffers[], void *arg)
{
    (void)arg;
    double *x = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
    for (unsigned i = 0; i < n; i++)
        x[i] += 1.0;
}

static struct starpu_codelet scale_cl = {
    .cpu_funcs = {scale_cpu},
    .nbuffers = 1,
    .modes = {STARPU_RW},
    .name = "plain_add_one",
};

int main(void)
{
    static double x[NTASKS][N];
    starpu_data_handle_t handles[NTASKS];
    int ret = starpu_init(NULL);
    if (ret == -ENODEV)
        return 77;
    if (ret != 0) {
        fprintf(stderr, "plain_starpu: starpu_init failed: %d\n", ret);
        return 1;
    }
    const struct starpu_sched_policy *policy = starpu_sched_ctx_get_sched_policy(0);
    printf("plain_starpu: policy %s (%s)\n", policy && policy->policy_name ? policy->policy_name : "?",
           policy && policy->policy_description ? policy->policy_description : "");
    for (int t = 0; t < NTASKS; t++) {
        starpu_vector_data_register(&handles[t], STARPU_MAIN_RAM, (uintptr_t)x[t], N, sizeof(double));
        ret = starpu_task_insert(&scale_cl, STARPU_RW, handles[t], 0);
        if (ret != 0) {
            fprintf(stderr, "plain_starpu: task submission failed: %d\n", ret);
            return 1;
        }
    }
    starpu_task_wait_for_all();
    for (int t = 0; t < NTASKS; t++)
        starpu_data_unregister(handles[t]);
    starpu_shutdown();
    for (int t = 0; t < NTASKS; t++)
        for (int i = 0; i < N; i++)
            if (x[t][i] != 1.0) {
                fprintf(stderr, "plain_starpu: wrong result at task %d element %d\n", t, i);
                return 1;
            }
    printf("plain_starpu: %d tasks done\n", NTASKS);
    return 0;
}
