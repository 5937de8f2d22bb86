/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An ordinary StarPU-MPI program that knows nothing about hetpu (linked against StarPU-MPI
 * only): every rank runs a few tasks and rank 1 sends a vector to rank 0. The preload test
 * runs it on 2 ranks under LD_PRELOAD=libhetpu-preload.so. */
#include <starpu_mpi.h>
#include <stdio.h>

#define N 100

static void add_one(void *buffers[], void *arg)
{
    (void)arg;
    double *x = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
        x[i] += 1.0;
}

static struct starpu_codelet cl = {.cpu_funcs = {add_one}, .nbuffers = 1, .modes = {STARPU_RW}, .name = "mpi_add_one"};

int main(int argc, char **argv)
{
    static double x[N];
    starpu_data_handle_t h;
    int rank, size;
    if (starpu_mpi_init_conf(&argc, &argv, 1, MPI_COMM_WORLD, NULL) != 0)
        return 1;
    starpu_mpi_comm_rank(MPI_COMM_WORLD, &rank);
    starpu_mpi_comm_size(MPI_COMM_WORLD, &size);
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)x, N, sizeof(double));
    for (int t = 0; t < 10; t++)
        starpu_task_insert(&cl, STARPU_RW, h, 0);
    if (size > 1 && rank == 1)
        starpu_mpi_send(h, 0, 7, MPI_COMM_WORLD);
    else if (size > 1 && rank == 0)
        starpu_mpi_recv(h, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    starpu_data_unregister(h);
    if (rank == 0)
        printf("rank 0: x[0] = %g\n", x[0]);
    starpu_mpi_shutdown();
    return 0;
}
