/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Several threads of an unmodified StarPU program call starpu_init() at the same instant
 * (StarPU allows it and counts the calls), repeatedly. Run under libhetpu-preload.so, every
 * round must start StarPU under the policy named in STARPU_SCHED; the program prints how
 * many rounds ran under each policy name ("greedy 100").
 *
 *   concurrent_init ROUNDS THREADS */
#include <pthread.h>
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 64
#define MAX_NAMES 16

static pthread_barrier_t barrier;
static int results[MAX_THREADS];

static void *start(void *arg)
{
    int *ret = (int *)arg;
    /* The barrier releases every thread together, so the calls overlap as much as the
	 * scheduler allows; the race it looks for needs no particular interleaving to show. */
    pthread_barrier_wait(&barrier);
    *ret = starpu_init(NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: concurrent_init ROUNDS THREADS\n");
        return 2;
    }
    int rounds = atoi(argv[1]), nthreads = atoi(argv[2]);
    if (rounds < 1 || nthreads < 1 || nthreads > MAX_THREADS) {
        fprintf(stderr, "concurrent_init: ROUNDS >= 1 and 1 <= THREADS <= %d\n", MAX_THREADS);
        return 2;
    }
    char names[MAX_NAMES][64];
    int counts[MAX_NAMES] = {0}, nnames = 0;
    for (int r = 0; r < rounds; r++) {
        pthread_t threads[MAX_THREADS];
        pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
        for (int t = 0; t < nthreads; t++)
            if (pthread_create(&threads[t], NULL, start, &results[t]) != 0) {
                perror("concurrent_init: pthread_create");
                return 1;
            }
        for (int t = 0; t < nthreads; t++)
            pthread_join(threads[t], NULL);
        pthread_barrier_destroy(&barrier);
        for (int t = 0; t < nthreads; t++)
            if (results[t] != 0) {
                if (results[t] == -ENODEV)
                    return 77;
                fprintf(stderr, "concurrent_init: round %d thread %d: starpu_init returned %d\n", r, t, results[t]);
                return 1;
            }
        struct starpu_sched_policy *p = starpu_sched_ctx_get_sched_policy(0);
        const char *name = p && p->policy_name ? p->policy_name : "(none)";
        int i;
        for (i = 0; i < nnames && strcmp(names[i], name) != 0; i++)
            ;
        if (i == nnames && nnames < MAX_NAMES)
            snprintf(names[nnames++], sizeof names[0], "%s", name);
        if (i < nnames)
            counts[i]++;
        /* One shutdown per successful init: StarPU stops at the last one. */
        for (int t = 0; t < nthreads; t++)
            starpu_shutdown();
    }
    for (int i = 0; i < nnames; i++)
        printf("%s %d\n", names[i], counts[i]);
    return 0;
}
