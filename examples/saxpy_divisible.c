/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An application outside hetpu's tree, built only from what `make install` puts in place:
 *   cc saxpy_divisible.c $(pkg-config --cflags --libs hetpu) -o saxpy_divisible
 *   STARPU_SCHED=plb-hac ./saxpy_divisible [elements]
 * y = a x + y over a divisible range: hetpu's policy chooses every block's size and the
 * worker that runs it. The program checks every element and prints one line naming the
 * planner, so a script can tell that the policy asked for was the one used. Exit status 0
 * only when every element is right. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <hetpu/divisible.h>
#include <hetpu/hetpu.h>

struct saxpy {
    float a;
    float *x;
    float *y;
};

static void saxpy_cpu(void *buffers[], void *cl_arg)
{
    float a;
    starpu_codelet_unpack_args(cl_arg, &a);
    const unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
    const float *x = (const float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    float *y = (float *)STARPU_VECTOR_GET_PTR(buffers[1]);
    for (unsigned i = 0; i < n; i++)
        y[i] += a * x[i];
}

static struct starpu_perfmodel saxpy_model = {.type = STARPU_HISTORY_BASED, .symbol = "example_saxpy"};

static struct starpu_codelet saxpy_codelet = {
    .cpu_funcs = {saxpy_cpu},
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_RW},
    .model = &saxpy_model,
};

/* Each block registers its own slices of x and y; the runner unregisters them (mask 0x3)
 * once the block is submitted, which brings y's slice back to main memory. */
static int fill_block(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task)
{
    struct saxpy *s = arg;
    starpu_data_handle_t x, y;
    starpu_vector_data_register(&x, STARPU_MAIN_RAM, (uintptr_t)(s->x + offset), (uint32_t)count, sizeof(float));
    starpu_vector_data_register(&y, STARPU_MAIN_RAM, (uintptr_t)(s->y + offset), (uint32_t)count, sizeof(float));
    task->cl = &saxpy_codelet;
    task->handles[0] = x;
    task->handles[1] = y;
    char *packed;
    size_t packed_size;
    starpu_codelet_pack_args((void **)&packed, &packed_size, STARPU_VALUE, &s->a, sizeof s->a, 0);
    task->cl_arg = packed;
    task->cl_arg_size = packed_size;
    task->cl_arg_free = 1;
    return 0;
}

int main(int argc, char **argv)
{
    const uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1u << 22;
    if (n == 0) {
        fprintf(stderr, "usage: %s [elements > 0]\n", argv[0]);
        return 2;
    }
    struct saxpy s = {.a = 2.0f, .x = malloc(n * sizeof(float)), .y = malloc(n * sizeof(float))};
    if (!s.x || !s.y) {
        fprintf(stderr, "saxpy_divisible: out of memory for %llu elements\n", (unsigned long long)n);
        return 1;
    }
    for (uint64_t i = 0; i < n; i++) {
        s.x[i] = (float)(i % 1000);
        s.y[i] = 1.0f;
    }

    int rc = hetpu_init(NULL);
    if (rc == HETPU_INIT_HELP_SHOWN)
        return 0;
    if (rc != 0) {
        fprintf(stderr, "saxpy_divisible: hetpu_init failed (%d)\n", rc);
        return 1;
    }
    const struct hetpu_divisible_job job = {
        .name = "saxpy",
        .total = n,
        .granule = 1024,
        .codelet = &saxpy_codelet,
        .fill_task = fill_block,
        .block_handle_mask = 0x3,
        .arg = &s,
    };
    struct hetpu_divisible_report *report = malloc(sizeof *report);
    rc = report ? hetpu_divisible_run(&job, report) : -ENOMEM;
    hetpu_shutdown();
    if (rc != 0) {
        fprintf(stderr, "saxpy_divisible: hetpu_divisible_run failed (%d)\n", rc);
        return 1;
    }

    uint64_t wrong = 0;
    for (uint64_t i = 0; i < n; i++)
        wrong += s.y[i] != 1.0f + 2.0f * (float)(i % 1000);
    printf("saxpy: %llu elements in %u blocks, planner %s, %u workers, %llu wrong\n",
           (unsigned long long)report->elements, report->blocks, report->planner, report->nworkers,
           (unsigned long long)wrong);
    free(report);
    free(s.x);
    free(s.y);
    return wrong == 0 ? 0 : 1;
}
