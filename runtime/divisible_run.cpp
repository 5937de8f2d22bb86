// StarPU glue of the divisible-workload runner: turns the dispatcher's assignments into
// tasks and feeds completions (timed by StarPU's profiling) back to it. All decisions
// live in runtime/core/block_dispatcher.cpp.
#include <hetpu/divisible.h>
#include <hetpu/hetpu.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/block_dispatcher.h"
#include "runtime/starpu_start.h"

namespace hetpu {
namespace {

struct WorkerTotals {
    unsigned blocks = 0;
    uint64_t elements = 0;
    double busy_s = 0;
    double transfer_s = 0;
};

struct Run {
    const hetpu_divisible_job *job = nullptr;
    double t0_us = 0;  // starpu_timing_now() at the first submission
    std::unique_ptr<BlockPlanner> planner;
    std::unique_ptr<BlockDispatcher> dispatcher;

    std::mutex mutex;  // guards everything below
    std::condition_variable changed;
    int error = 0;
    unsigned busy_callbacks = 0;
    unsigned pending_writebacks = 0;
    unsigned blocks_done = 0;
    uint64_t elements_done = 0;
    std::vector<WorkerTotals> totals = std::vector<WorkerTotals>(STARPU_NMAXWORKERS);
};

struct BlockArg {
    Run *run;
    Assignment assignment;
};

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

void block_finished(void *arg);
void writeback_done(void *arg);

// starpu_task_destroy() refuses tasks marked for automatic destruction, which
// starpu_task_create() tasks are; one that was never submitted must be freed by hand.
void discard_unsubmitted(struct starpu_task *task)
{
    task->destroy = 0;
    starpu_task_destroy(task);
}

struct WritebackArg {
    Run *run;
    starpu_data_handle_t handle;
};

// The block's results are back in main memory: let go of the handle. Unregistering only
// now (rather than right after submission) is what lets hetpu_divisible_run() return
// with every result in place: StarPU's asynchronous unregistration gives no completion
// signal to wait on.
void writeback_done_unguarded(void *arg)
{
    std::unique_ptr<WritebackArg> wb(static_cast<WritebackArg *>(arg));
    starpu_data_release(wb->handle);
    starpu_data_unregister_submit(wb->handle);
    std::lock_guard<std::mutex> lock(wb->run->mutex);
    --wb->run->pending_writebacks;
    wb->run->changed.notify_all();
}

// Called without run.mutex held: submission enters the policy's push_task.
void submit_all(Run &run, const std::vector<Assignment> &assignments)
{
    const hetpu_divisible_job &job = *run.job;
    for (const Assignment &a : assignments) {
        struct starpu_task *task = starpu_task_create();
        int rc = job.fill_task(job.arg, a.offset, a.count, task);
        if (rc != 0) {
            std::fprintf(stderr, "hetpu: %s: building the task of block [%llu, %llu) failed: %s\n",
                         job.name ? job.name : "divisible job", (unsigned long long)a.offset,
                         (unsigned long long)(a.offset + a.count), std::strerror(rc < 0 ? -rc : rc));
            discard_unsubmitted(task);
            fail(run, a, rc < 0 ? rc : -rc);
            continue;
        }
        task->callback_func = block_finished;
        task->callback_arg = new BlockArg{&run, a};
        if (a.worker >= 0) {
            task->execute_on_a_specific_worker = 1;
            task->workerid = static_cast<unsigned>(a.worker);
        }
        // Read the per-block handles now: once submitted the task may finish and be
        // destroyed at any moment.
        std::vector<starpu_data_handle_t> block_handles;
        const unsigned nbuffers = task->cl ? STARPU_TASK_GET_NBUFFERS(task) : 0;
        for (unsigned i = 0; i < nbuffers && i < 32; ++i)
            if (job.block_handle_mask & (1u << i))
                block_handles.push_back(STARPU_TASK_GET_HANDLE(task, i));
        rc = starpu_task_submit(task);
        if (rc == 0) {
            for (starpu_data_handle_t h : block_handles) {
                {
                    std::lock_guard<std::mutex> lock(run.mutex);
                    ++run.pending_writebacks;
                }
                // Ordered after the task by sequential consistency: fires once the
                // block's output is valid in main memory.
                if (starpu_data_acquire_cb(h, STARPU_R, writeback_done, new WritebackArg{&run, h}) != 0) {
                    std::lock_guard<std::mutex> lock(run.mutex);
                    --run.pending_writebacks;
                }
            }
        } else {
            for (starpu_data_handle_t h : block_handles)
                starpu_data_unregister_submit(h);
            std::fprintf(stderr, "hetpu: %s: submitting block [%llu, %llu) failed: %s%s\n",
                         job.name ? job.name : "divisible job", (unsigned long long)a.offset,
                         (unsigned long long)(a.offset + a.count), std::strerror(-rc),
                         rc == -ENODEV ? " (no worker can run this codelet)" : "");
            delete static_cast<BlockArg *>(task->callback_arg);
            task->callback_arg = nullptr;
            discard_unsubmitted(task);
            fail(run, a, rc);
        }
    }
}

// Runs on the worker that executed the block, after the task's data were released.
void block_finished_unguarded(void *arg)
{
    std::unique_ptr<BlockArg> block(static_cast<BlockArg *>(arg));
    Run &run = *block->run;
    struct starpu_task *task = starpu_task_get_current();

    BlockDone done;
    done.offset = block->assignment.offset;
    done.count = block->assignment.count;
    done.worker = starpu_worker_get_id();
    done.end_s = (starpu_timing_now() - run.t0_us) * 1e-6;
    if (task && task->profiling_info) {
        const struct starpu_profiling_task_info *info = task->profiling_info;
        done.worker = info->workerid;
        done.exec_s = seconds_between(info->start_time, info->end_time);
        done.transfer_s = seconds_between(info->acquire_data_start_time, info->acquire_data_end_time);
    }

    std::vector<Assignment> next;
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        ++run.busy_callbacks;
        if (done.worker >= 0 && done.worker < STARPU_NMAXWORKERS) {
            WorkerTotals &t = run.totals[done.worker];
            ++t.blocks;
            t.elements += done.count;
            t.busy_s += done.exec_s;
            t.transfer_s += done.transfer_s;
        }
        ++run.blocks_done;
        run.elements_done += done.count;
        next = run.dispatcher->complete(done);
    }
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

// Workers able to run the job's codelet (all workers when the job names none).
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

int parse_block_env(uint64_t &block)
{
    block = 0;
    const char *env = std::getenv("HETPU_BLOCK");
    if (!env || !*env)
        return 0;
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(env, &end, 10);
    if (errno || *end || v == 0 || env[0] == '-') {
        std::fprintf(stderr, "hetpu: HETPU_BLOCK='%s' is not a positive number of elements; unset it or give e.g. HETPU_BLOCK=256\n", env);
        return -EINVAL;
    }
    block = v;
    return 0;
}

}  // namespace
}  // namespace hetpu

extern "C" int hetpu_divisible_run(const struct hetpu_divisible_job *job, struct hetpu_divisible_report *report)
{
    using namespace hetpu;
    const char *label = job && job->name ? job->name : "divisible job";
    if (!job || !job->fill_task) {
        std::fprintf(stderr, "hetpu: %s: the job needs a fill_task callback\n", label);
        return -EINVAL;
    }
    if (!hetpu_policy_name()) {
        std::fprintf(stderr, "hetpu: %s: StarPU is not running; call hetpu_init() first\n", label);
        return -EINVAL;
    }
    BlockRules rules{job->total, job->granule, job->min_block, job->name ? job->name : ""};
    if (std::string why = normalize_block_rules(rules); !why.empty()) {
        std::fprintf(stderr, "hetpu: %s: %s\n", label, why.c_str());
        return -EINVAL;
    }
    std::vector<PlannerWorker> workers = eligible_workers(*job);
    if (workers.empty()) {
        std::fprintf(stderr, "hetpu: %s: no worker can run the job's codelet\n", label);
        return -ENODEV;
    }

    Run run;
    run.job = job;
    uint64_t fixed_block = 0;
    const RegisteredPolicy *policy = running_hetpu_policy();
    if (policy && policy->make_planner) {
        run.planner = policy->make_planner(workers, rules);
        if (!run.planner) {
            std::fprintf(stderr, "hetpu: %s: policy %s could not plan this job\n", label, hetpu_policy_name());
            return -EINVAL;
        }
    } else {
        uint64_t requested = 0;
        if (int rc = parse_block_env(requested); rc)
            return rc;
        if (requested == 0)
            requested = job->default_block;
        if (std::string why = choose_fixed_block(rules, requested, static_cast<unsigned>(workers.size()), fixed_block);
            !why.empty()) {
            std::fprintf(stderr, "hetpu: %s: %s\n", label, why.c_str());
            return -EINVAL;
        }
        run.planner = std::make_unique<FixedBlockPlanner>(fixed_block);
    }
    std::vector<int> ids;
    for (const auto &w : workers)
        ids.push_back(w.id);
    run.dispatcher = std::make_unique<BlockDispatcher>(rules, *run.planner, ids);

    // Block timings come from the profiling info; it must be on before submission.
    if (starpu_profiling_status_get() != STARPU_PROFILING_ENABLE)
        starpu_profiling_status_set(STARPU_PROFILING_ENABLE);

    const double t0 = starpu_timing_now();
    run.t0_us = t0;
    std::vector<Assignment> first;
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        first = run.dispatcher->start();
    }
    submit_all(run, first);
    {
        std::unique_lock<std::mutex> lock(run.mutex);
        run.changed.wait(lock, [&] {
            return run.dispatcher->finished() && run.busy_callbacks == 0 && run.pending_writebacks == 0;
        });
    }
    const double makespan_s = (starpu_timing_now() - t0) * 1e-6;

    if (run.dispatcher->forced_remainder())
        std::fprintf(stderr, "hetpu: %s: planner %s declined every worker; the remainder was forced onto one worker\n",
                     label, run.planner->name().c_str());

    if (report) {
        std::memset(report, 0, sizeof *report);
        report->makespan_s = makespan_s;
        report->elements = run.elements_done;
        report->blocks = run.blocks_done;
        report->fixed_block = fixed_block;
        std::snprintf(report->planner, sizeof report->planner, "%s", run.planner->name().c_str());
        for (const auto &w : workers) {
            if (report->nworkers >= STARPU_NMAXWORKERS)
                break;
            hetpu_worker_report &r = report->workers[report->nworkers++];
            const WorkerTotals &t = run.totals[w.id];
            r.workerid = w.id;
            r.type = starpu_worker_get_type(w.id);
            std::snprintf(r.name, sizeof r.name, "%s", w.name.c_str());
            r.blocks = t.blocks;
            r.elements = t.elements;
            r.busy_s = t.busy_s;
            r.transfer_s = t.transfer_s;
        }
    }
    if (run.error == 0 && run.elements_done != rules.total) {
        std::fprintf(stderr, "hetpu: %s: internal error: %llu of %llu elements processed\n", label,
                     (unsigned long long)run.elements_done, (unsigned long long)rules.total);
        return -EIO;
    }
    return run.error;
}
