/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Scale-out: one hetpu job across the ranks of an MPI launch (mpirun, srun) on StarPU-MPI.
 *
 * A program started by an MPI launcher calls hetpu_init_mpi() instead of hetpu_init() on
 * every rank (hetpu_mpi_launched() tells which applies). Every rank must resolve the same
 * policy. hetpu_divisible_run() (divisible.h), called on every rank with the same job,
 * then runs it under the central planner: every worker of every rank is one PU, one
 * planner on rank 0 chooses each block's size, rank and worker; blocks run on their rank;
 * per-block timings come back to the planner in small MPI messages. Data move with
 * StarPU-MPI (hetpu_divisible_run_placed(), below, keeps data with their owners instead):
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

#include <hetpu/divisible.h>
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

/* Collective: every rank's `bytes` bytes at mine land, rank after rank, in all on rank 0
 * (size x bytes; all is ignored elsewhere), e.g. each rank's partial results of a job whose
 * data the ranks own. A copy in a single process. 0, -EINVAL, -EFBIG (over 2 GiB), -EIO. */
int hetpu_mpi_gather(const void *mine, size_t bytes, void *all);

/* The bytes this rank has sent and received so far through hetpu_mpi_bcast and
 * hetpu_mpi_gather (the application's own exchanges, outside its divisible jobs), counted as
 * if rank 0 exchanged directly with every rank: a broadcast of b bytes is (size - 1) x b sent
 * by rank 0 and b received by each other rank. 0 and 0 in a single process. Either pointer
 * may be NULL. */
void hetpu_mpi_app_bytes(uint64_t *sent, uint64_t *received);

/* Collective: the smallest of every rank's value (the value itself in a single process),
 * e.g. the newest checkpoint version that every rank holds, or 0 when any rank failed. */
long long hetpu_mpi_min(long long value);

/* Owner-computes placement of a divisible job's data over the ranks.
 *
 * Without it, every rank must hold the whole job's inputs and rank 0 relays each block's
 * data (see above): simple, but rank 0's memory and network link bound the job. With it,
 * each rank holds only a share of the elements:
 *   - the coordinator (rank 0) gives every rank one contiguous share, in proportion to
 *     its processing units; hold(HETPU_HOLD_SHARE) is called on each rank for its share
 *     before any block: allocate the share's inputs and results and produce the inputs
 *     (read them, generate them);
 *   - under the per-node planner (HETPU_MPI_PLANNER=per-node, the default with a
 *     placement), each rank's own planner cuts its share into blocks for its workers;
 *     only node-level progress reaches rank 0. When a rank falls behind, the unstarted
 *     tail of its share is re-shared: it calls hold(HETPU_HOLD_BORROWED) on a faster rank
 *     (room only), the range's per-block inputs go directly from the owner to that rank
 *     with StarPU-MPI (through fill_task's block handles, registered over the range on
 *     both), the blocks run there, and their results go directly back to the owner;
 *     release() then frees the room. No data passes through a third rank;
 *   - on return each rank's share has its results in that rank's memory
 *     (report->share_offset/share_count); gathering them is the program's choice.
 * fill_task is then also called for a whole range being moved (its task is never
 * submitted): the per-block handles must be registered over the job's own storage of that
 * range, the same memory whenever the same elements are asked for (matmul's columns). A
 * job whose per-block buffers are fresh for every call (partial results combined
 * afterwards) may be placed only if a buffer no task wrote combines as nothing (grn starts
 * its outputs empty) and each rank then combines what its own tasks wrote (the blocks of a
 * borrowed range run on the borrower); otherwise run it with hetpu_divisible_run().
 * Under HETPU_MPI_PLANNER=central the job runs as without a placement: hold() is called
 * for the whole job on every rank. In a single process hold() is called once for the
 * whole job. */
enum hetpu_hold_kind {
    HETPU_HOLD_SHARE = 0,   /* this rank's own share: allocate and produce its inputs */
    HETPU_HOLD_BORROWED = 1 /* another rank's range computed here: allocate room only */
};

struct hetpu_divisible_placement {
    /* Make [offset, offset + count) usable by fill_task on this rank. Return 0 or -errno
	 * (-ENOMEM: the rank cannot hold it; the job then fails on every rank). Called from
	 * the thread that called hetpu_divisible_run_placed(). */
    int (*hold)(void *arg, uint64_t offset, uint64_t count, enum hetpu_hold_kind kind);
    /* A borrowed range is done and its results are back with their owner. NULL: the room
	 * is kept until the program frees it. */
    void (*release)(void *arg, uint64_t offset, uint64_t count);
    /* Bytes of one element's per-block data (inputs in, results out): what re-sharing
	 * costs on the network, for the coordinator's decisions. 0: treated as free. */
    uint64_t bytes_per_element;
    void *arg;
    /* The share this rank already holds, for a program whose data outlive one job (an
     * iterative method runs one job per iteration over the same points): the share of
     * hetpu_mpi_share(), or report->share_offset/share_count of an earlier job. When any
     * rank gives held_count > 0, the ranks' held shares must tile [0, total) in rank order
     * (under the central planner every rank must hold all of it); hold(HETPU_HOLD_SHARE)
     * is then not called and the coordinator starts from these shares. Re-sharing still
     * borrows ranges for one job; ownership never changes. 0 and 0: the coordinator
     * chooses, and hold() is called. */
    uint64_t held_offset;
    uint64_t held_count;
};

/* Collective: the share [*offset, *offset + *count) the coordinator gives this rank for a
 * job like this one (its name, size and codelet; from every rank's speed kept from
 * earlier runs of it, else from the ranks' processing units), so that a program can read
 * or generate its data before its first job and pass the share as held_offset/held_count.
 * Under the central planner (HETPU_MPI_PLANNER=central) the share is the whole job, on
 * every rank. In a single process: the whole job. 0 or -errno (-EINVAL: invalid job,
 * -ENODEV: no worker of any rank can run its codelet). */
int hetpu_mpi_share(const struct hetpu_divisible_job *job, uint64_t *offset, uint64_t *count);

/* hetpu_divisible_run() with the job's data placed by owner (see above). Collective on a
 * multi-rank run: every rank calls it with the same job. Same return values as
 * hetpu_divisible_run(), plus hold()'s error. */
int hetpu_divisible_run_placed(const struct hetpu_divisible_job *job, const struct hetpu_divisible_placement *placement,
                               struct hetpu_divisible_report *report);

/* Collective: checks that every rank runs the same job before it starts. Every rank passes
 * a textual signature of its job: space-separated key=value tokens of everything that must
 * match (sizes, seed, options; not what may differ per rank, such as an output path), e.g.
 * "n=256 k=256 seed=1 precision=double". Rank 0 gathers and compares them. Returns 0 when
 * all equal rank 0's (and always in a single process); otherwise -EINVAL on every rank, and
 * rank 0 prints "hetpu: <what>: rank 2 runs a different job than rank 0: n=512 instead of
 * n=256 (give every rank the same options)", naming the first differing token.
 * Data fingerprints: a token "data:PATH=FINGERPRINT" (PATH with spaces and '%' written %20
 * and %25, FINGERPRINT in hex, e.g. 64-bit FNV-1a of the file's bytes) for each input file
 * a rank reads itself. Only the fingerprints must match, in order (each rank may read its
 * own copy under another name); on a difference rank 0 prints "hetpu: <what>: rank 2 read
 * different data than rank 0: its 'PATH' (fingerprint ...) is not rank 0's 'PATH' ...". */
int hetpu_mpi_same_job(const char *what, const char *signature);

/* Name of this rank's host (for reports); "" on failure. */
const char *hetpu_host_name(void);

#ifdef __cplusplus
}
#endif

#endif
