// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/block_run.h"

#include <hetpu/hetpu.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/settings.h"
#include "runtime/divisible/core/planner_extensions.h"
#include "runtime/start/starpu_start.h"
#include "runtime/divisible/copies_running.h"
#include "runtime/divisible/workers_paused.h"

namespace hetpu {
namespace {

// A block's results on their way home: its per-block handles still being written back
// (see writeback_done) and when it ended. Once both are known the planner hears how long
// after its end the job could have used them (PlannerExtensions::results_home). Guarded by
// run.mutex.
struct BlockHomecoming {
    unsigned pending = 0;  // handles not yet back in main memory
    int worker = -1;       // as told to the planner in block_done
    uint64_t offset = 0, count = 0;
    double end_s = -1, home_s = -1;  // seconds since the run started; < 0: not yet
    bool reported = false;
};

// Both the task's pop prologue (block_started) and its completion callback get it; the
// completion frees it.
struct BlockArg {
    std::shared_ptr<Run> run;
    Assignment assignment;
    double submitted_us = 0;  // starpu_timing_now() when its task was built and submitted
    std::shared_ptr<BlockHomecoming> homecoming;
    struct starpu_task *task = nullptr;
    bool idle = false;  // withdrawn: it ran its codelet's idle twin
};

void block_finished(void *arg);
void writeback_done(void *arg);

struct WritebackArg {
    std::shared_ptr<Run> run;
    starpu_data_handle_t handle;
    std::shared_ptr<BlockHomecoming> homecoming;
    uint64_t id;  // the task's Assignment id
};

// A task ended with its per-block handles home: its private output is committed (kept) or
// thrown away, and a kept block's results count as home. Called without run.mutex, from a
// callback counted in run.busy_callbacks (so the job cannot return before a commit ends).
void settle(Run &run, const SettledTask &s)
{
    if (s.task.output) {
        if (s.keep)
            run.job->commit(run.job->arg, s.task.offset, s.task.count, s.task.output);
        else
            run.job->discard(s.task.output);  // may be after the return: the job's arg is not used
    }
    std::lock_guard<std::mutex> lock(run.mutex);
    if (s.keep && run.track_homes)
        run.homes.push_back({s.task.offset, s.task.count});
    if (run.returned)
        late_task_settled();
    run.changed.notify_all();
}

// The worker took the task (StarPU's pop prologue, on the worker's thread, before its data
// are fetched): from now on the block runs there and can only be copied, not taken back. A
// block withdrawn before runs its codelet's idle twin instead.
void block_started(void *arg)
{
    auto *block = static_cast<BlockArg *>(arg);
    Run &run = *block->run;
    const uint64_t id = block->assignment.id;
    const double now_s = (starpu_timing_now() - run.t0_us) * 1e-6;
    std::lock_guard<std::mutex> lock(run.mutex);
    run.tasks.started(id, now_s);
    bool runs = run.withdrawn.count(id) == 0;
    if (!run.returned) {
        runs = run.dispatcher->take(id);
        run.dispatcher->started(id, now_s);
    }
    if (!runs)
        if (struct starpu_codelet *twin = run.idle_codelets.twin_of(block->task->cl, starpu_worker_get_id())) {
            block->task->cl = twin;
            block->idle = true;
        }
}

// Called with run.mutex held, whenever one side of a homecoming is known.
void report_homecoming(Run &run, BlockHomecoming &h)
{
    if (h.reported || h.pending > 0 || h.end_s < 0 || h.home_s < 0)
        return;
    h.reported = true;
    if (hetpu::PlannerExtensions *x = run.planner->extensions())
        x->results_home({h.worker, h.offset, h.count, h.end_s, h.home_s});
}

// The block's results are back in main memory: let go of the handle. Unregistering only
// now (rather than right after submission) is what lets hetpu_divisible_run() return
// with every result in place: StarPU's asynchronous unregistration gives no completion
// signal to wait on.
void writeback_done_unguarded(void *arg)
{
    std::unique_ptr<WritebackArg> wb(static_cast<WritebackArg *>(arg));
    const double home_us = starpu_timing_now();
    Run &run = *wb->run;
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        ++run.busy_callbacks;
    }
    starpu_data_release(wb->handle);
    starpu_data_unregister_submit(wb->handle);
    std::optional<SettledTask> settled;
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        if (BlockHomecoming *h = wb->homecoming.get(); h && h->pending > 0 && --h->pending == 0) {
            h->home_s = (home_us - run.t0_us) * 1e-6;
            report_homecoming(run, *h);
        }
        settled = run.tasks.handle_home(wb->id);
        --run.pending_writebacks;
    }
    if (settled)
        settle(run, *settled);
    std::lock_guard<std::mutex> lock(run.mutex);
    --run.busy_callbacks;
    run.changed.notify_all();
}

// Runs on the worker that executed the block, after the task's data were released.
void block_finished_unguarded(void *arg)
{
    std::unique_ptr<BlockArg> block(static_cast<BlockArg *>(arg));
    Run &run = *block->run;
    const Assignment &a = block->assignment;
    struct starpu_task *task = starpu_task_get_current();

    BlockDone done;
    done.id = a.id;
    done.backup = a.backup;
    done.offset = a.offset;
    done.count = a.count;
    done.worker = starpu_worker_get_id();
    done.end_s = (starpu_timing_now() - run.t0_us) * 1e-6;
    done.submitted_s = (block->submitted_us - run.t0_us) * 1e-6;
    if (task && task->profiling_info) {
        const struct starpu_profiling_task_info *info = task->profiling_info;
        done.worker = info->workerid;
        done.exec_s = seconds_between(info->start_time, info->end_time);
        done.transfer_s = seconds_between(info->acquire_data_start_time, info->acquire_data_end_time);
    }

    std::vector<Assignment> next;
    std::unique_ptr<PuRefit> refit;
    int total_index = done.worker;
    bool late = false, kept = false;
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        ++run.busy_callbacks;
        late = run.returned;
        if (!run.pus.empty()) {
            // The planner hears about the PU it handed the block to (with PerPuPlanner the
            // rank's policy may have run it on another worker); totals follow the worker
            // that really ran it.
            const int g = done.worker >= 0 && static_cast<size_t>(done.worker) < run.global_of_local.size()
                              ? run.global_of_local[done.worker]
                              : -1;
            total_index = g >= 0 ? g : a.worker;
            done.worker = a.worker;
        }
        if (!late) {
            // Claimed before complete(): the first task of its range to end keeps its output.
            kept = run.dispatcher->claim(a.id);
            refit = run.dispatcher->prepare_refit(done);
        }
    }
    // The refit of this worker's models (a curve choice may take a millisecond) runs
    // without the lock, alongside the other workers' completions (PlannerExtensions::prepare_refit).
    if (refit)
        refit->run();
    std::optional<SettledTask> settled;
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        if (!late && !block->idle && total_index >= 0 && static_cast<size_t>(total_index) < run.totals.size()) {
            WorkerTotals &t = run.totals[total_index];
            if (kept) {
                ++t.blocks;
                t.elements += done.count;
                t.busy_s += done.exec_s;
                t.transfer_s += done.transfer_s;
            }
            run.longest_block_s = std::max(run.longest_block_s, done.exec_s + done.transfer_s);
            if (done.exec_s + done.transfer_s > 0)
                t.last_rate = static_cast<double>(done.count) / (done.exec_s + done.transfer_s);
        }
        if (kept) {
            ++run.blocks_done;
            run.elements_done += done.count;
        }
        if (!late)
            next = run.dispatcher->complete(done, refit.get());  // kept or not: the unit is free again
        else
            late_copy_ended(&run, a.id);
        settled = run.tasks.ended(a.id, kept, done.exec_s);
        if (BlockHomecoming *h = block->homecoming.get()) {
            h->worker = done.worker;
            h->offset = done.offset;
            h->count = done.count;
            h->end_s = done.end_s;
            h->reported = h->reported || !kept;  // a thrown-away output never comes home
            report_homecoming(run, *h);
        }
    }
    if (settled)
        settle(run, *settled);
    submit_all(run, next);
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        --run.busy_callbacks;
        run.changed.notify_all();
    }
}

// StarPU is C: an exception must not unwind through its frames. The only ones possible
// here are allocation failures, after which the run's bookkeeping cannot be trusted, so
// stop loudly rather than hang or lose blocks silently.
void block_finished(void *arg)
{
    try {
        block_finished_unguarded(arg);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hetpu: fatal: %s in a block completion callback\n", e.what());
        std::abort();
    }
}

void writeback_done(void *arg)
{
    try {
        writeback_done_unguarded(arg);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hetpu: fatal: %s in a block write-back callback\n", e.what());
        std::abort();
    }
}

WorkerKind kind_of(enum starpu_worker_archtype type)
{
    switch (type) {
    case STARPU_CPU_WORKER: return WorkerKind::Cpu;
    case STARPU_OPENCL_WORKER: return WorkerKind::OpenCL;
    case STARPU_CUDA_WORKER: return WorkerKind::Cuda;
    default: return WorkerKind::Other;
    }
}

int parse_block_env(uint64_t &block)
{
    try {
        block = hetpu::Settings().whole("HETPU_BLOCK").value_or(0);
    } catch (const hetpu::SettingError &e) {
        std::fprintf(stderr, "hetpu: %s\n", e.what());
        block = 0;
        return -EINVAL;
    }
    return 0;
}

// Once the task has written `h`, its value is read back into main memory
// (writeback_done). Ordered after the task by sequential consistency.
void follow_writeback(Run &run, starpu_data_handle_t h, const std::shared_ptr<BlockHomecoming> &homecoming, uint64_t id)
{
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        ++run.pending_writebacks;
    }
    if (starpu_data_acquire_cb(h, STARPU_R, writeback_done,
                               new WritebackArg{run.shared_from_this(), h, homecoming, id}) == 0)
        return;
    std::optional<SettledTask> settled;
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        --run.pending_writebacks;
        homecoming->pending = 0;  // one of its results is not followed: no homecoming to report
        homecoming->reported = true;
        ++run.busy_callbacks;
        settled = run.tasks.handle_home(id);
    }
    if (settled)
        settle(run, *settled);
    std::lock_guard<std::mutex> lock(run.mutex);
    --run.busy_callbacks;
    run.changed.notify_all();
}

}  // namespace

double seconds_between(const struct timespec &a, const struct timespec &b)
{
    return (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
}

void fail(Run &run, const Assignment &a, int error)
{
    std::lock_guard<std::mutex> lock(run.mutex);
    if (run.error == 0)
        run.error = error;
    run.dispatcher->abandon(a);
    run.dispatcher->stop();
    run.changed.notify_all();
}

// With both of StarPU's caps set, a submission past STARPU_LIMIT_MAX_SUBMITTED_TASKS waits
// for tasks to end; StarPU aborts when that happens in a completion callback, which is where
// a job's later blocks are submitted. Said once per process, before it can happen.
void warn_of_submission_throttle(const char *label)
{
    const char *max = hetpu::process_env("STARPU_LIMIT_MAX_SUBMITTED_TASKS");
    const char *min = hetpu::process_env("STARPU_LIMIT_MIN_SUBMITTED_TASKS");
    if (!max || !min || std::atoi(max) < 0 || std::atoi(min) < 0)
        return;
    static std::once_flag once;
    std::call_once(once, [&] {
        std::fprintf(stderr,
                     "hetpu: %s: STARPU_LIMIT_MAX_SUBMITTED_TASKS=%s (with STARPU_LIMIT_MIN_SUBMITTED_TASKS=%s) "
                     "throttles submission, and StarPU aborts if a block's completion callback submits the "
                     "next block while more than %s tasks are submitted: keep it above the tasks the program "
                     "has in flight plus 2 per worker, or unset both\n",
                     label, max, min, max);
    });
}

bool is_divisible_block(const struct starpu_task *task) { return task->prologue_callback_pop_func == block_started; }

void discard_unsubmitted(struct starpu_task *task)
{
    task->destroy = 0;
    starpu_task_destroy(task);
}

void submit_all(Run &run, const std::vector<Assignment> &assignments, WorkersPausedForSubmission *paused)
{
    const hetpu_divisible_job &job = *run.job;
    for (const Assignment &a : assignments) {
        int local_worker = a.worker;
        if (!run.pus.empty()) {
            const ClusterPu &pu = run.pus.at(static_cast<size_t>(a.worker));
            if (pu.rank != 0) {
                // Only the main thread talks to other ranks (and it owns the per-block
                // bookkeeping of remote blocks): hand the block over.
                std::lock_guard<std::mutex> lock(run.mutex);
                run.outbox.push_back(a);
                run.changed.notify_all();
                continue;
            }
            local_worker = run.planner_places ? pu.local_worker : -1;
        }
        if (a.backup && !run.private_outputs) {
            // The dispatcher was told the job takes no copies (choose_copies): a copy here
            // would write the job's results a second time.
            std::fprintf(stderr, "hetpu: %s: internal error: a backup copy of [%llu, %llu) for a job without copies\n",
                         job.name ? job.name : "divisible job", (unsigned long long)a.offset,
                         (unsigned long long)(a.offset + a.count));
            fail(run, a, -EIO);
            continue;
        }
        const double submitted_us = starpu_timing_now();
        struct starpu_task *task = starpu_task_create();
        void *output = nullptr;
        int rc = run.private_outputs ? job.fill_private(job.arg, a.offset, a.count, task, &output)
                                     : job.fill_task(job.arg, a.offset, a.count, task);
        if (rc != 0) {
            std::fprintf(stderr, "hetpu: %s: building the task of block [%llu, %llu) failed: %s\n",
                         job.name ? job.name : "divisible job", (unsigned long long)a.offset,
                         (unsigned long long)(a.offset + a.count), std::strerror(rc < 0 ? -rc : rc));
            discard_unsubmitted(task);
            fail(run, a, rc < 0 ? rc : -rc);
            continue;
        }
        task->callback_func = block_finished;
        auto homecoming = std::make_shared<BlockHomecoming>();
        auto *block = new BlockArg{run.shared_from_this(), a, submitted_us, homecoming, task};
        task->callback_arg = block;
        task->prologue_callback_pop_func = block_started;
        task->prologue_callback_pop_arg = block;
        if (local_worker >= 0) {
            task->execute_on_a_specific_worker = 1;
            task->workerid = static_cast<unsigned>(local_worker);
        }
        // Read the per-block handles now: once submitted the task may finish and be
        // destroyed at any moment.
        std::vector<starpu_data_handle_t> block_handles;
        const unsigned nbuffers = task->cl ? STARPU_TASK_GET_NBUFFERS(task) : 0;
        for (unsigned i = 0; i < nbuffers && i < 32; ++i)
            if (job.block_handle_mask & (1u << i))
                block_handles.push_back(STARPU_TASK_GET_HANDLE(task, i));
        {
            std::lock_guard<std::mutex> lock(run.mutex);
            homecoming->pending = static_cast<unsigned>(block_handles.size());
            run.tasks.submitted(
                {a.id, a.offset, a.count, a.worker, a.backup, output, static_cast<unsigned>(block_handles.size())});
            if (run.withdrawn.count(a.id))  // withdrawn between its hand-out and now
                run.tasks.withdraw(a.id);
        }
        if (task->synchronous && paused)
            paused->end();  // a synchronous submission waits for its task to end
        rc = starpu_task_submit(task);
        if (rc == 0) {
            for (starpu_data_handle_t h : block_handles)
                follow_writeback(run, h, homecoming, a.id);
        } else {
            for (starpu_data_handle_t h : block_handles)
                starpu_data_unregister_submit(h);
            std::fprintf(stderr, "hetpu: %s: submitting block [%llu, %llu) failed: %s%s\n",
                         job.name ? job.name : "divisible job", (unsigned long long)a.offset,
                         (unsigned long long)(a.offset + a.count), std::strerror(-rc),
                         rc == -ENODEV ? " (no worker can run this codelet)" : "");
            delete block;
            task->callback_arg = nullptr;
            discard_unsubmitted(task);
            {
                std::lock_guard<std::mutex> lock(run.mutex);
                run.tasks.forget(a.id);
            }
            // The private output is not freed: its handles may still be unregistering, and
            // the run has failed.
            fail(run, a, rc);
        }
    }
}

std::vector<PlannerWorker> eligible_workers(const hetpu_divisible_job &job)
{
    std::vector<PlannerWorker> workers;
    struct starpu_task probe;
    starpu_task_init(&probe);
    probe.cl = job.codelet;
    const unsigned n = starpu_worker_get_count();
    for (unsigned w = 0; w < n; ++w) {
        if (job.codelet && !starpu_worker_can_execute_task_first_impl(w, &probe, nullptr))
            continue;
        char name[HETPU_REPORT_NAME_LEN];
        starpu_worker_get_name(static_cast<int>(w), name, sizeof name);
        workers.push_back({static_cast<int>(w), kind_of(starpu_worker_get_type(static_cast<int>(w))), name});
    }
    probe.cl = nullptr;
    starpu_task_clean(&probe);
    return workers;
}

int make_job_planner(const hetpu_divisible_job &job, const std::vector<PlannerWorker> &workers, const BlockRules &rules,
                     const char *label, std::unique_ptr<BlockPlanner> &planner, uint64_t &fixed_block)
{
    fixed_block = 0;
    const RegisteredPolicy *policy = running_hetpu_policy();
    if (policy && policy->make_planner) {
        planner = policy->make_planner(workers, rules);
        if (!planner) {
            std::fprintf(stderr, "hetpu: %s: policy %s could not plan this job\n", label, hetpu_policy_name());
            return -EINVAL;
        }
        return 0;
    }
    uint64_t requested = 0;
    if (int rc = parse_block_env(requested); rc)
        return rc;
    if (requested == 0)
        requested = job.default_block;
    try {
        fixed_block = choose_fixed_block(rules, requested, static_cast<unsigned>(workers.size()));
    } catch (const std::invalid_argument &e) {
        std::fprintf(stderr, "hetpu: %s: %s\n", label, e.what());
        return -EINVAL;
    }
    planner = std::make_unique<FixedBlockPlanner>(fixed_block);
    return 0;
}

void fill_report_header(hetpu_divisible_report &report, const Run &run, double makespan_s, uint64_t fixed_block,
                        int ranks)
{
    std::memset(&report, 0, sizeof report);
    report.makespan_s = makespan_s;
    report.elements = run.elements_done;
    report.blocks = run.blocks_done;
    report.fixed_block = fixed_block;
    report.ranks = ranks;
    if (run.planner)
        std::snprintf(report.planner, sizeof report.planner, "%s", run.planner->name().c_str());
}

bool run_settled(const Run &run)
{
    return run.dispatcher->finished() && run.busy_callbacks == 0 && run.tasks.awaited() == 0;
}

void wait_until_done(Run &run)
{
    std::unique_lock<std::mutex> lock(run.mutex);
    run.changed.wait(lock, [&] { return run_settled(run); });
}

std::shared_ptr<Run> make_run(const hetpu_divisible_job &job)
{
    auto run = std::make_shared<Run>();
    run->job_copy = job;
    run->job = &run->job_copy;
    return run;
}

double start_run(Run &run)
{
    if (starpu_profiling_status_get() != STARPU_PROFILING_ENABLE)
        starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    const double t0 = starpu_timing_now();
    run.t0_us = t0;
    std::vector<Assignment> first;
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        first = run.dispatcher->start();
    }
    WorkersPausedForSubmission paused(first.size());
    submit_all(run, first, &paused);
    return t0;
}

int run_status(const Run &run, const BlockRules &rules, const char *label)
{
    if (run.error == 0 && run.elements_done != rules.total) {
        std::fprintf(stderr, "hetpu: %s: internal error: %llu of %llu elements processed\n", label,
                     (unsigned long long)run.elements_done, (unsigned long long)rules.total);
        return -EIO;
    }
    return run.error;
}

}  // namespace hetpu
