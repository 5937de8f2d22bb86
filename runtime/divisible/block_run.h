// SPDX-License-Identifier: LGPL-2.1-or-later
// What the single-process and the multi-rank divisible runners share (runtime/divisible/local_run.cpp,
// runtime/mpi/mpi_run.cpp): the run's state, block submission and completion, the job's
// planner, the start of a run and its report. StarPU glue only: every decision lives in
// runtime/divisible/core/block_dispatcher.cpp and the planners.
#pragma once

#include <hetpu/divisible.h>
#include <starpu.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "runtime/divisible/core/block_dispatcher.h"
#include "runtime/divisible/idle_codelet.h"
#include "runtime/divisible/task_ledger.h"
#include "runtime/mpi/core/cluster.h"

namespace hetpu {

class WorkersPausedForSubmission;

struct WorkerTotals {
    unsigned blocks = 0;
    uint64_t elements = 0;
    double busy_s = 0;
    double transfer_s = 0;
    double last_rate = 0;  // elements per second of its last block (execution + transfer)
    // Backup copies handed to it, and its seconds of thrown-away work (filled for the
    // report from close_run()).
    unsigned copies = 0;
    double lost_s = 0;
};

// Shared (make_run()): a losing copy may still be running when its job returns, and its
// callbacks keep the run's bookkeeping alive until it has ended.
struct Run : std::enable_shared_from_this<Run> {
    // The job as given; after the return only its discard hook is used (see include/hetpu/divisible.h).
    hetpu_divisible_job job_copy = {};
    const hetpu_divisible_job *job = nullptr;  // &job_copy
    double t0_us = 0;                          // starpu_timing_now() at the first submission
    std::unique_ptr<BlockPlanner> planner;
    std::unique_ptr<BlockDispatcher> dispatcher;
    // Every block runs into private output (fill_private): the job opted in to backup
    // copies and the dispatcher may hand some out. Set before start_run().
    bool private_outputs = false;

    std::mutex mutex;  // guards everything below
    std::condition_variable changed;
    int error = 0;
    unsigned busy_callbacks = 0;
    unsigned pending_writebacks = 0;
    unsigned blocks_done = 0;    // kept blocks
    uint64_t elements_done = 0;  // elements of the kept blocks: each element once
    double longest_block_s = 0;  // the longest block run here (execution + transfer): the liveness limit follows it
    std::vector<WorkerTotals> totals = std::vector<WorkerTotals>(STARPU_NMAXWORKERS);
    TaskLedger tasks;
    // The job has returned (close_run()): the dispatcher and the planner are no longer
    // told of what ends later (losing copies), and may be gone.
    bool returned = false;
    // Blocks the dispatcher withdrew (BlockDispatcher::set_withdrawable): when their unit
    // reaches them they run their codelet's idle twin, even after the job has returned.
    std::set<uint64_t> withdrawn;
    IdleCodelets idle_codelets;

    // Multi-rank runs only (empty/unused in a single process). Assignments then carry
    // global PU ids (indices into pus); totals are indexed by global PU id too.
    std::vector<ClusterPu> pus;
    std::vector<int> global_of_local;  // this rank's worker id -> global PU id
    bool planner_places = true;        // false: PerPuPlanner, the rank's policy places blocks
    std::vector<Assignment> outbox;    // blocks for other ranks, sent by the main thread
    std::vector<uint64_t> arrived;     // remote blocks whose results are home (by seq)
    // Per-node multi-rank runs: blocks whose results are back in main memory, for the
    // runner to send borrowed ranges' results to their owners (filled only when set).
    bool track_homes = false;
    std::vector<Block> homes;
};

double seconds_between(const struct timespec &a, const struct timespec &b);

// A run of `job` (copied into it). The runner sets planner and dispatcher.
std::shared_ptr<Run> make_run(const hetpu_divisible_job &job);

// Records the first error, abandons the block and stops the dispatcher (no more blocks).
void fail(Run &run, const Assignment &a, int error);

// Warns once per process when StarPU's submission caps could abort a completion callback.
void warn_of_submission_throttle(const char *label);

// Whether the task is a block of a divisible job (submitted by submit_all), for policies that
// treat blocks apart from the program's other tasks.
bool is_divisible_block(const struct starpu_task *task);

// starpu_task_destroy() refuses tasks marked for automatic destruction, which
// starpu_task_create() tasks are; one that was never submitted must be freed by hand.
void discard_unsubmitted(struct starpu_task *task);

// Builds and submits the tasks of `assignments` (blocks of other ranks go to run.outbox).
// Called without run.mutex held: submission enters the policy's push_task. `paused`: the
// workers held off while a job's first blocks are submitted (nullptr: none held).
void submit_all(Run &run, const std::vector<Assignment> &assignments, WorkersPausedForSubmission *paused = nullptr);

// Workers able to run the job's codelet (all workers when the job names none).
std::vector<PlannerWorker> eligible_workers(const hetpu_divisible_job &job);

// The job's planner: the policy's own (plb-hac, hdss, ...), else fixed blocks of
// HETPU_BLOCK or the job's default size. `workers` are the PUs the planner sees.
int make_job_planner(const hetpu_divisible_job &job, const std::vector<PlannerWorker> &workers, const BlockRules &rules,
                     const char *label, std::unique_ptr<BlockPlanner> &planner, uint64_t &fixed_block);

// The start both runners share, once run.planner and run.dispatcher are set: profiling on
// (block timings come from it), the clock started, the dispatcher's first blocks submitted
// with the workers held off until all are queued. Returns the start (starpu_timing_now()).
double start_run(Run &run);

// Waits until every element is done once with its result in place (a losing copy may
// still run: see close_run).
void wait_until_done(Run &run);

// Every element done and in place, nothing of this run's completions in progress. Called
// with run.mutex held.
bool run_settled(const Run &run);

void fill_report_header(hetpu_divisible_report &report, const Run &run, double makespan_s, uint64_t fixed_block,
                        int ranks);

// The run's status at its end: its first error, or -EIO (said) when the planner's blocks
// did not cover the job.
int run_status(const Run &run, const BlockRules &rules, const char *label);

}  // namespace hetpu
