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
 * a one-task launch is a plain run, and hetpu_init_mpi() refuses several tasks (-ENOSYS). */
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
 * ranks), or an error on every rank when any rank cannot start (no usable worker, an
 * invalid setting, or it called hetpu_mpi_refuse_start()): that rank's own error there,
 * -ECANCELED on the others, and rank 0 prints "hetpu: rank R (host H) cannot start: why"
 * for each such rank. Built without MPI: a one-task launch (or none) starts a plain run as
 * hetpu_init() does; several tasks return -ENOSYS with a message.
 * hetpu_shutdown() stops StarPU-MPI and StarPU, and finalises MPI if hetpu initialised it. */
int hetpu_init_mpi(struct starpu_conf *conf, int *argc, char ***argv);

/* Collective counterpart of hetpu_init_mpi() for a rank that will not start (its command
 * line or its input is invalid): it takes part in the start-up check, so that every rank
 * stops with "hetpu: rank R (host H) cannot start: <reason>" instead of waiting for this
 * one. Returns -ECANCELED (MPI is finalised again); 0 without MPI support. */
int hetpu_mpi_refuse_start(const char *reason, int *argc, char ***argv);

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

/* Collective: checks that every rank runs the same job before it starts. Every rank passes
 * a textual signature of its job: space-separated key=value tokens of everything that must
 * match (sizes, seed, options; not what may differ per rank, such as an output path), e.g.
 * "n=256 k=256 seed=1 precision=double". Rank 0 gathers and compares them. Returns 0 when
 * all equal rank 0's (and always in a single process); otherwise -EINVAL on every rank, and
 * rank 0 prints "hetpu: <what>: rank 2 runs a different job than rank 0: n=512 instead of
 * n=256 (give every rank the same options)", naming the first differing token. */
int hetpu_mpi_same_job(const char *what, const char *signature);

/* Name of this rank's host (for reports); "" on failure. */
const char *hetpu_host_name(void);

#ifdef __cplusplus
}
#endif

#endif
