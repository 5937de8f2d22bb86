/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Divisible workloads: one large data-parallel job cut into blocks whose sizes are chosen
 * at run time (the model of the PLB-HAC and HEPOPTA papers).
 *
 * The application describes the job (total size, granule, minimum block) and how to build
 * the StarPU task for the block [offset, offset + count). hetpu_divisible_run() then
 * generates blocks until the whole range is processed:
 *   - under a StarPU built-in policy (dmda, eager, ...) and under hetpu policies without a
 *     block planner, the job is cut into fixed blocks (HETPU_BLOCK=<elements>, else the
 *     job's default_block) and the policy places them;
 *   - under a hetpu policy with a block planner (plb-hac, hepopta, ...), the planner
 *     chooses each block's size and the worker that runs it.
 * New blocks are submitted from task completion callbacks, never from the scheduler's
 * push/pop (StarPU forbids it), and two blocks are kept in flight per worker so no
 * processing unit waits for the next one to be generated. */
#ifndef HETPU_DIVISIBLE_H
#define HETPU_DIVISIBLE_H

#include <stdint.h>
#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hetpu_divisible_job {
    /* Label used in reports ("matmul"). plb-hac keeps the models it learns under the name
	 * and total (in the process, and in $HETPU_HOME across runs), so jobs whose elements
	 * cost differently at the same total (another matrix height) need different names;
	 * NULL: nothing is kept. */
    const char *name;
    /* Number of elements to process (columns, rows, points...). Must be > 0. */
    uint64_t total;
    /* Block sizes are multiples of granule, except a final block holding what remains.
	 * 0 means 1. */
    uint64_t granule;
    /* No block is smaller than this unless less remains. 0 means granule. */
    uint64_t min_block;
    /* Block size when blocks are fixed. 0 means total / (4 * workers), rounded to the
	 * granule. HETPU_BLOCK overrides it. */
    uint64_t default_block;
    /* Fill task (already created by the runner) for [offset, offset + count): codelet,
	 * handles, arguments. Do not set callback, destroy or worker fields. Called from the
	 * submitting thread or from a task completion callback; must not block on tasks (on
	 * the submitting thread, the first blocks are filled while StarPU's workers are held
	 * off with starpu_pause, so that they start together).
	 * Return 0 or -errno; an error stops block generation and hetpu_divisible_run()
	 * returns it once the blocks in flight have finished. */
    int (*fill_task)(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task);
    /* Bit i set: task->handles[i] was registered by fill_task for this block only; the
	 * runner unregisters it asynchronously once the task is submitted, which writes the
	 * block's results back to main memory. */
    uint32_t block_handle_mask;
    /* The codelet of the job's tasks (optional but recommended): only workers that can
	 * run it take part, so a planner never assigns a block to a worker without an
	 * implementation. NULL: every worker. */
    struct starpu_codelet *codelet;
    void *arg;

    /* Backup copies (optional: set all three, or none). Once every block of a job is
	 * handed out, a hetpu policy (plb-hac) may give an idle unit a copy of a block that
	 * started on a unit expected to end after it. The first of the two to end is kept; the
	 * job returns once every element is done once, and the other runs to its end into
	 * output that is thrown away. A job that leaves fill_private NULL never gets a copy.
	 *
	 * fill_private: as fill_task, except that the task writes none of the job's results:
	 * it writes into storage of its own, allocated here and returned in *output, which the
	 * runner hands back exactly once, to commit or to discard. Register that storage as
	 * per-block handles (block_handle_mask): the runner commits or discards it once those
	 * are back in main memory. Inputs are read where fill_task reads them; a kernel that
	 * works in place works on a private copy of its input. When the job opts in and the
	 * policy may make copies, every block goes through fill_private (a block may lose to
	 * its copy, so it must not write the results either); otherwise fill_task does all,
	 * and nothing changes. On a multi-rank run fill_task still describes the data that
	 * moves between ranks. */
    int (*fill_private)(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task, void **output);
    /* The kept task of [offset, offset + count): move its output into the job's results
	 * and free it. Called once per block, before hetpu_divisible_run() returns, from a
	 * StarPU callback, concurrently with other commits and with fill_private. */
    void (*commit)(void *arg, uint64_t offset, uint64_t count, void *output);
    /* Free the output of a task that was not kept. Called once the task has ended and its
	 * output is back in main memory, possibly after hetpu_divisible_run() has returned: it
	 * must not use arg. */
    void (*discard)(void *output);
};

#define HETPU_REPORT_NAME_LEN 64

struct hetpu_worker_report {
    int workerid;
    enum starpu_worker_archtype type;
    char name[HETPU_REPORT_NAME_LEN];
    unsigned blocks;
    uint64_t elements;
    /* Sum of task execution times (profiling end - start), in seconds. */
    double busy_s;
    /* Sum of input acquisition times (profiling acquire_data_end - start), in seconds. On
	 * a multi-rank run (mpi.h), a remote block also counts the network: its inputs
	 * arriving on its rank and its results arriving back on rank 0. */
    double transfer_s;
    /* MPI rank of the worker (0 in a single process) and its host name. */
    int rank;
    char host[HETPU_REPORT_NAME_LEN];
    /* Backup copies this worker was handed, and its seconds of work whose output was
	 * thrown away (losing blocks and copies; one still running counts until the job
	 * returned). blocks, elements and busy_s count only the kept tasks. */
    unsigned copies;
    double lost_s;
};

#define HETPU_REPORT_MAX_RANKS 64

/* One rank of a multi-rank run. Data bytes are the job's per-block data that crossed the
 * network (inputs and results of blocks and of re-shared ranges); control bytes are
 * hetpu's own messages (assignments, timings, progress). */
struct hetpu_rank_report {
    int rank;
    char host[HETPU_REPORT_NAME_LEN];
    uint64_t share_offset; /* the share it held at the start */
    uint64_t share_count;
    uint64_t elements; /* elements its workers processed */
    uint64_t data_bytes_sent;
    uint64_t data_bytes_received;
    uint64_t control_bytes_sent;
    uint64_t control_bytes_received;
    /* Peak resident memory of the process so far (getrusage), in bytes. */
    uint64_t max_rss_bytes;
    /* Its node's link as measured at the start (per-node planner; 0 when not measured):
	 * one-way latency in seconds and bandwidth in bytes per second. */
    double link_latency_s;
    double link_bytes_per_s;
    /* The longest time rank 0 heard no progress from it during the run, measured at its
	 * heartbeats (six per liveness limit; 0 for rank 0): what the limit
	 * (HETPU_MPI_LIVENESS_S) is compared with. */
    double longest_silence_s;
};

struct hetpu_divisible_report {
    /* Wall time from the first submission to the last completion, in seconds. */
    double makespan_s;
    uint64_t elements;
    unsigned blocks;
    /* Fixed block size in elements, or 0 when a planner chose the sizes. */
    uint64_t fixed_block;
    /* "fixed" or the planner's name. */
    char planner[HETPU_REPORT_NAME_LEN];
    unsigned nworkers;
    struct hetpu_worker_report workers[STARPU_NMAXWORKERS];
    /* Number of MPI ranks that took part (1 in a single process). On a multi-rank run the
	 * report is complete on rank 0; elsewhere it holds only ranks and planner. */
    int ranks;
    /* Multi-rank runs (mpi.h): how the job was planned, "per-node" (each rank plans its
	 * share, data owned by ranks) or "central" (one planner on rank 0, data relayed
	 * through it); "" in a single process. */
    char mpi_planner[16];
    /* This rank's share [share_offset, share_offset + share_count): its results are in
	 * this rank's memory on return (the whole job in a single process and under the
	 * central planner, whose results all come home to rank 0). */
    uint64_t share_offset;
    uint64_t share_count;
    /* Ranges handed from one rank to another by re-sharing, and the coordinator's time
	 * deciding them after the start, in seconds (0 under the central planner). */
    unsigned moves;
    double coordinator_s;
    /* The start-up exchange that gives every rank its share (per-node), in seconds. */
    double shares_s;
    /* Per rank, the first HETPU_REPORT_MAX_RANKS ranks (rank 0's report only). */
    unsigned nrank_reports;
    struct hetpu_rank_report rank_reports[HETPU_REPORT_MAX_RANKS];
    /* Backup copies (this rank's): how many were run, how many were kept (they ended before
	 * the block they copied), the seconds of work thrown away (the losers' execution, and
	 * for those still running at the return, what they had run), and the losers still
	 * running when the job returned (their units count as busy for the next job). */
    unsigned copies;
    unsigned copies_kept;
    double copies_lost_s;
    unsigned copies_running;
};

/* Process the whole job; returns once every block has completed. Under hetpu_init_mpi()
 * with several ranks, every rank calls it with the same job and the job is spread over
 * the workers of all ranks (see mpi.h for what moves between ranks). StarPU must have been
 * started by hetpu_init(). report may be NULL. Returns 0, -EINVAL for an invalid job (the
 * reason is printed on stderr), -ENODEV when no worker can run the job's tasks, or the
 * first error of fill_task / starpu_task_submit. */
int hetpu_divisible_run(const struct hetpu_divisible_job *job, struct hetpu_divisible_report *report);

/* A job with backup copies may return while a losing task still runs (report.copies_running).
 * That task still reads the job's shared data: handles the job registered for the whole
 * run (not in block_handle_mask) and the memory behind them. Unregister such handles with
 * starpu_data_unregister_submit() (starpu_data_unregister() would wait for the loser),
 * and keep their memory until the losers have ended: this call waits for every losing task
 * of earlier jobs to end and its output to be discarded. hetpu_shutdown() waits too. */
void hetpu_divisible_wait_copies(void);

#ifdef __cplusplus
}
#endif

#endif
