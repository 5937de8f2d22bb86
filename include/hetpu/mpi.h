/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Scale-out: one hetpu job across the ranks of an MPI launch (mpirun, srun) on StarPU-MPI.
 *
 * A program started by an MPI launcher calls hetpu_init_mpi() instead of hetpu_init() on
 * every rank (hetpu_mpi_launched() tells which applies). Every rank must resolve the same
 * policy. hetpu_divisible_run() (divisible.h), called on every rank with the same job,
 * then treats every worker of every rank as one PU: one planner on rank 0 chooses each
 * block's size, rank and worker; blocks run on their rank; per-block timings come back to
 * the planner in small MPI messages. Data move with StarPU-MPI:
 *   - the job's per-block handles (block_handle_mask) travel: those the codelet reads
 *     (STARPU_R, STARPU_RW) go from rank 0 to the block's rank before it runs, those it
 *     writes (STARPU_W, STARPU_RW) come back to rank 0 afterwards, so rank 0's memory
 *     holds every result when hetpu_divisible_run() returns there;
 *   - every other handle of the task (the job's shared inputs) must already be valid on
 *     every rank: generate it from the same seed everywhere, or broadcast it first.
 * On ranks other than 0 the per-block buffers are scratch space: fill_task registers them
 * at the same offsets, StarPU-MPI fills the inputs, and the outputs are sent home.
 * The report is complete on rank 0 only (workers of every rank, with their rank and host).
 *
 * Built without MPI, the functions below still exist: a single process is rank 0 of 1,
 * and hetpu_init_mpi() returns -ENOSYS. */
#ifndef HETPU_MPI_H
#define HETPU_MPI_H

#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Nonzero when this process was started by an MPI launcher (OMPI_COMM_WORLD_SIZE,
 * PMI_SIZE, PMIX_RANK or SLURM_STEP_NUM_TASKS is set), i.e. when an app should call
 * hetpu_init_mpi() rather than hetpu_init(). */
int hetpu_mpi_launched(void);

/* Nonzero when hetpu was built with StarPU-MPI. */
int hetpu_mpi_available(void);

/* Initialise MPI (MPI_THREAD_MULTIPLE: hetpu's control messages and StarPU-MPI's thread
 * both call MPI; when the program already initialised MPI that level is required too),
 * then StarPU and StarPU-MPI on MPI_COMM_WORLD with the policy resolved as hetpu_init()
 * does. Collective: every rank must call it. Returns 0, HETPU_INIT_HELP_SHOWN, -EINVAL
 * when the ranks ask for different policies (or a name is unknown; the message names the
 * ranks), -ENOSYS without MPI support, or StarPU's error on any rank (then on every rank).
 * hetpu_shutdown() stops StarPU-MPI and StarPU, and finalises MPI if hetpu initialised it. */
int hetpu_init_mpi(struct starpu_conf *conf, int *argc, char ***argv);

/* This process's rank and the number of ranks once hetpu_init_mpi() succeeded; 0 and 1
 * otherwise (a single process). */
int hetpu_mpi_rank(void);
int hetpu_mpi_size(void);

/* Collective: copy rank 0's `bytes` bytes at buf into buf on every rank (plain MPI, on
 * hetpu's own communicator), e.g. so that every rank continues an iterative computation
 * with the values rank 0 gathered. A no-op returning 0 in a single process. */
int hetpu_mpi_bcast(void *buf, size_t bytes);

/* Collective: the smallest of every rank's value (the value itself in a single process),
 * e.g. the newest checkpoint version that every rank holds, or 0 when any rank failed. */
long long hetpu_mpi_min(long long value);

/* Name of this rank's host (for reports); "" on failure. */
const char *hetpu_host_name(void);

#ifdef __cplusplus
}
#endif

#endif
