// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue of the divisible-workload runner: turns the dispatcher's assignments into
// tasks and feeds completions (timed by StarPU's profiling) back to it. All decisions
// live in runtime/core/block_dispatcher.cpp.
#include <hetpu/divisible.h>
#include <hetpu/hetpu.h>
#include <hetpu/mpi.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/core/block_dispatcher.h"
#include "runtime/core/cluster.h"
#include "runtime/mpi_state.h"
#include "runtime/starpu_start.h"
#include "runtime/workers_paused.h"

#ifdef HETPU_HAVE_MPI
#include <starpu_mpi.h>
#endif

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

    // Multi-rank runs only (empty/unused in a single process). Assignments then carry
    // global PU ids (indices into pus); totals are indexed by global PU id too.
    std::vector<ClusterPu> pus;
    std::vector<int> global_of_local;  // this rank's worker id -> global PU id
    bool planner_places = true;        // false: PerPuPlanner, the rank's policy places blocks
    std::vector<Assignment> outbox;    // blocks for other ranks, sent by the main thread
    std::vector<uint64_t> arrived;     // remote blocks whose results are home (by seq)
};

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

struct BlockArg {
    Run *run;
    Assignment assignment;
    double submitted_us = 0;  // starpu_timing_now() when its task was built and submitted
    std::shared_ptr<BlockHomecoming> homecoming;
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

// With both of StarPU's caps set, a submission past STARPU_LIMIT_MAX_SUBMITTED_TASKS waits
// for tasks to end; StarPU aborts when that happens in a completion callback, which is where
// a job's later blocks are submitted. Said once per process, before it can happen.
void warn_of_submission_throttle(const char *label)
{
    const char *max = std::getenv("STARPU_LIMIT_MAX_SUBMITTED_TASKS");
    const char *min = std::getenv("STARPU_LIMIT_MIN_SUBMITTED_TASKS");
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
    std::shared_ptr<BlockHomecoming> homecoming;
};

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
    starpu_data_release(wb->handle);
    starpu_data_unregister_submit(wb->handle);
    Run &run = *wb->run;
    std::lock_guard<std::mutex> lock(run.mutex);
    if (BlockHomecoming *h = wb->homecoming.get(); h && h->pending > 0 && --h->pending == 0) {
        h->home_s = (home_us - run.t0_us) * 1e-6;
        report_homecoming(run, *h);
    }
    --run.pending_writebacks;
    run.changed.notify_all();
}

// Called without run.mutex held: submission enters the policy's push_task. `paused`: the
// workers held off while a job's first blocks are submitted (nullptr: none held).
void submit_all(Run &run, const std::vector<Assignment> &assignments, WorkersPausedForSubmission *paused = nullptr)
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
        const double submitted_us = starpu_timing_now();
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
        auto homecoming = std::make_shared<BlockHomecoming>();
        task->callback_arg = new BlockArg{&run, a, submitted_us, homecoming};
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
        }
        if (task->synchronous && paused)
            paused->end();  // a synchronous submission waits for its task to end
        rc = starpu_task_submit(task);
        if (rc == 0) {
            for (starpu_data_handle_t h : block_handles) {
                {
                    std::lock_guard<std::mutex> lock(run.mutex);
                    ++run.pending_writebacks;
                }
                // Ordered after the task by sequential consistency: fires once the
                // block's output is valid in main memory.
                if (starpu_data_acquire_cb(h, STARPU_R, writeback_done, new WritebackArg{&run, h, homecoming}) != 0) {
                    std::lock_guard<std::mutex> lock(run.mutex);
                    --run.pending_writebacks;
                    homecoming->pending = 0;  // one of its results is not followed: no homecoming to report
                    homecoming->reported = true;
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
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        ++run.busy_callbacks;
        if (!run.pus.empty()) {
            // The planner hears about the PU it handed the block to (with PerPuPlanner the
            // rank's policy may have run it on another worker); totals follow the worker
            // that really ran it.
            const int g = done.worker >= 0 && static_cast<size_t>(done.worker) < run.global_of_local.size()
                              ? run.global_of_local[done.worker]
                              : -1;
            total_index = g >= 0 ? g : block->assignment.worker;
            done.worker = block->assignment.worker;
        }
        refit = run.dispatcher->prepare_refit(done);
    }
    // The refit of this worker's models (a curve choice may take a millisecond) runs
    // without the lock, alongside the other workers' completions (PlannerExtensions::prepare_refit).
    if (refit)
        refit->run();
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        if (total_index >= 0 && static_cast<size_t>(total_index) < run.totals.size()) {
            WorkerTotals &t = run.totals[total_index];
            ++t.blocks;
            t.elements += done.count;
            t.busy_s += done.exec_s;
            t.transfer_s += done.transfer_s;
        }
        ++run.blocks_done;
        run.elements_done += done.count;
        next = run.dispatcher->complete(done, refit.get());
        if (BlockHomecoming *h = block->homecoming.get()) {
            h->worker = done.worker;
            h->offset = done.offset;
            h->count = done.count;
            h->end_s = done.end_s;
            report_homecoming(run, *h);
        }
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
        std::fprintf(
            stderr,
            "hetpu: HETPU_BLOCK='%s' is not a positive number of elements; unset it or give e.g. HETPU_BLOCK=256\n",
            env);
        return -EINVAL;
    }
    block = v;
    return 0;
}

// The job's planner: the policy's own (plb-hac, hdss, ...), else fixed blocks of
// HETPU_BLOCK or the job's default size. `workers` are the PUs the planner sees.
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

// Waits until every block has finished and every result is back in place.
void wait_until_done(Run &run)
{
    std::unique_lock<std::mutex> lock(run.mutex);
    run.changed.wait(
        lock, [&] { return run.dispatcher->finished() && run.busy_callbacks == 0 && run.pending_writebacks == 0; });
}

#ifdef HETPU_HAVE_MPI

// ----------------------------------------------------------------------------------------
// Multi-rank runs (StarPU-MPI). Rank 0 owns the planner and the dispatcher; its main
// thread is the only one that exchanges control messages (plain MPI on hetpu's own
// communicator) and posts the StarPU-MPI transfers of remote blocks. Other ranks run
// serve_blocks(): receive an assignment, receive the block's inputs, run it on the named
// worker, send its outputs home, report the timing.

constexpr int kTagAssign = 1;
constexpr int kTagDone = 2;
constexpr int kTagStop = 3;
// How long a main thread sleeps when neither a message nor a local event is pending:
// short next to a block, long enough not to steal a core from the workers.
constexpr auto kPollPeriod = std::chrono::microseconds(300);

struct BlockBuffers {
    std::vector<starpu_data_handle_t> handles;
    std::vector<unsigned> index;  // buffer index in the task (gives the data tag)
    std::vector<bool> inbound;    // the codelet reads it: rank 0 sends it to the block's rank
    std::vector<bool> outbound;   // the codelet writes it: the block's rank sends it home
};

// The per-block handles of a task just filled by fill_task, with their directions.
int block_buffers(const hetpu_divisible_job &job, struct starpu_task *task, BlockBuffers &out)
{
    const unsigned nbuffers = task->cl ? STARPU_TASK_GET_NBUFFERS(task) : 0;
    for (unsigned i = 0; i < nbuffers && i < 32; ++i) {
        if (!(job.block_handle_mask & (1u << i)))
            continue;
        const enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
        if (!(mode & (STARPU_R | STARPU_W)))
            return -ENOTSUP;  // scratch/reduction buffers have no meaning across ranks
        out.handles.push_back(STARPU_TASK_GET_HANDLE(task, i));
        out.index.push_back(i);
        out.inbound.push_back((mode & STARPU_R) != 0);
        out.outbound.push_back((mode & STARPU_W) != 0);
    }
    return 0;
}

void unregister_all(const BlockBuffers &b)
{
    for (starpu_data_handle_t h : b.handles)
        starpu_data_unregister(h);
}

std::string wire_string(const char *s, size_t n) { return std::string(s, strnlen(s, n)); }

// Every rank's eligible workers, gathered on rank 0 (collective).
std::vector<ClusterPu> gather_pus(const std::vector<PlannerWorker> &local, MPI_Comm comm, int rank, int size)
{
    std::vector<WireWorker> mine(local.size());
    for (size_t i = 0; i < local.size(); ++i) {
        std::memset(&mine[i], 0, sizeof mine[i]);
        mine[i].local_worker = local[i].id;
        mine[i].kind = static_cast<int32_t>(local[i].kind);
        std::snprintf(mine[i].name, sizeof mine[i].name, "%s", local[i].name.c_str());
        std::snprintf(mine[i].host, sizeof mine[i].host, "%s", hetpu_host_name());
    }
    int bytes = static_cast<int>(mine.size() * sizeof(WireWorker));
    std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
    MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
    int total = 0;
    for (int r = 0; r < size; ++r) {
        displs[r] = total;
        total += counts[r];
    }
    std::vector<WireWorker> all(rank == 0 ? static_cast<size_t>(total) / sizeof(WireWorker) : 0);
    MPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0, comm);
    std::vector<ClusterPu> pus;
    if (rank != 0)
        return pus;
    size_t k = 0;
    for (int r = 0; r < size; ++r)
        for (int j = 0; j < counts[r] / static_cast<int>(sizeof(WireWorker)); ++j, ++k)
            pus.push_back({r, all[k].local_worker, static_cast<WorkerKind>(all[k].kind),
                           wire_string(all[k].name, sizeof all[k].name), wire_string(all[k].host, sizeof all[k].host)});
    return pus;
}

struct RemoteBlock {
    Assignment a;
    BlockBuffers buffers;
    WireDone done{};
    double recv_posted_us = 0;
    double sent_us = 0;          // starpu_timing_now() when rank 0 began sending it
    unsigned pending_recvs = 0;  // guarded by Run::mutex
};

struct ResultArrival {
    Run *run;
    RemoteBlock *block;
    uint64_t seq;
};

// StarPU-MPI callback: one output buffer of a remote block is home.
void result_arrived(void *arg)
{
    auto *r = static_cast<ResultArrival *>(arg);
    {
        std::lock_guard<std::mutex> lock(r->run->mutex);
        if (--r->block->pending_recvs == 0) {
            r->run->arrived.push_back(r->seq);
            r->run->changed.notify_all();
        }
    }
    delete r;
}

class Lead {
public:
    Lead(Run &run, MPI_Comm comm, const std::vector<ClusterPu> &pus) : run_(run), comm_(comm)
    {
        for (size_t g = 0; g < pus.size(); ++g)
            global_of_[{pus[g].rank, pus[g].local_worker}] = static_cast<int>(g);
    }

    void loop(double t0_us)
    {
        t0_us_ = t0_us;
        for (;;) {
            std::vector<Assignment> out;
            std::vector<uint64_t> arrived;
            {
                std::lock_guard<std::mutex> lock(run_.mutex);
                out.swap(run_.outbox);
                arrived.swap(run_.arrived);
                if (out.empty() && arrived.empty() && remote_.empty() && run_.dispatcher->finished() &&
                    run_.busy_callbacks == 0 && run_.pending_writebacks == 0)
                    break;
            }
            for (const Assignment &a : out)
                send_block(a);
            bool progressed = !out.empty() || !arrived.empty();
            progressed |= receive_done_messages();
            for (uint64_t seq : arrived)
                complete_remote(seq);
            if (!progressed) {
                std::unique_lock<std::mutex> lock(run_.mutex);
                run_.changed.wait_for(lock, kPollPeriod);
            }
        }
    }

private:
    void send_block(const Assignment &a)
    {
        const hetpu_divisible_job &job = *run_.job;
        const ClusterPu &pu = run_.pus[static_cast<size_t>(a.worker)];
        const uint64_t seq = next_seq_++;
        auto rb = std::make_unique<RemoteBlock>();
        rb->a = a;
        rb->sent_us = starpu_timing_now();
        // fill_task on rank 0 registers the block's buffers in rank 0's memory: the
        // inputs to send and the places the results land in. The task itself never runs.
        struct starpu_task *task = starpu_task_create();
        int rc = job.fill_task(job.arg, a.offset, a.count, task);
        if (rc == 0)
            rc = block_buffers(job, task, rb->buffers);
        discard_unsubmitted(task);
        if (rc != 0) {
            std::fprintf(stderr, "hetpu: %s: block [%llu, %llu) for rank %d: %s\n",
                         job.name ? job.name : "divisible job", (unsigned long long)a.offset,
                         (unsigned long long)(a.offset + a.count), pu.rank,
                         rc == -ENOTSUP ? "per-block buffers must be read or written (not scratch or reduction) "
                                          "to travel between ranks"
                                        : std::strerror(rc < 0 ? -rc : rc));
            unregister_all(rb->buffers);
            fail(run_, a, rc < 0 ? rc : -rc);
            return;
        }
        for (size_t i = 0; i < rb->buffers.handles.size(); ++i)
            if (rb->buffers.inbound[i])
                starpu_mpi_isend_detached(rb->buffers.handles[i], pu.rank, block_data_tag(seq, rb->buffers.index[i]),
                                          MPI_COMM_WORLD, nullptr, nullptr);
        WireAssign msg{};
        msg.seq = seq;
        msg.offset = a.offset;
        msg.count = a.count;
        msg.worker = run_.planner_places ? pu.local_worker : -1;
        MPI_Send(&msg, sizeof msg, MPI_BYTE, pu.rank, kTagAssign, comm_);
        remote_[seq] = std::move(rb);
    }

    bool receive_done_messages()
    {
        bool any = false;
        for (;;) {
            int flag = 0;
            MPI_Status status;
            MPI_Iprobe(MPI_ANY_SOURCE, kTagDone, comm_, &flag, &status);
            if (!flag)
                return any;
            any = true;
            WireDone d;
            MPI_Recv(&d, sizeof d, MPI_BYTE, status.MPI_SOURCE, kTagDone, comm_, MPI_STATUS_IGNORE);
            auto it = remote_.find(d.seq);
            if (it == remote_.end())
                continue;  // cannot happen: every DONE answers one ASSIGN
            RemoteBlock &rb = *it->second;
            rb.done = d;
            if (d.error != 0) {
                std::fprintf(stderr, "hetpu: block [%llu, %llu) failed on rank %d: %s\n",
                             (unsigned long long)rb.a.offset, (unsigned long long)(rb.a.offset + rb.a.count),
                             status.MPI_SOURCE, std::strerror(-d.error));
                unregister_all(rb.buffers);
                fail(run_, rb.a, d.error);
                remote_.erase(it);
                continue;
            }
            unsigned outputs = 0;
            for (size_t i = 0; i < rb.buffers.handles.size(); ++i)
                outputs += rb.buffers.outbound[i] ? 1 : 0;
            rb.recv_posted_us = starpu_timing_now();
            if (outputs == 0) {
                std::lock_guard<std::mutex> lock(run_.mutex);
                run_.arrived.push_back(d.seq);
                continue;
            }
            {
                std::lock_guard<std::mutex> lock(run_.mutex);
                rb.pending_recvs = outputs;
            }
            for (size_t i = 0; i < rb.buffers.handles.size(); ++i)
                if (rb.buffers.outbound[i])
                    starpu_mpi_irecv_detached(rb.buffers.handles[i], status.MPI_SOURCE,
                                              block_data_tag(d.seq, rb.buffers.index[i]), MPI_COMM_WORLD,
                                              result_arrived, new ResultArrival{&run_, &rb, d.seq});
        }
    }

    void complete_remote(uint64_t seq)
    {
        auto it = remote_.find(seq);
        if (it == remote_.end())
            return;
        std::unique_ptr<RemoteBlock> rb = std::move(it->second);
        remote_.erase(it);
        const double now = starpu_timing_now();
        // The results are in rank 0's memory already; unregistering only lets go of them.
        unregister_all(rb->buffers);
        BlockDone done;
        done.worker = rb->a.worker;
        done.offset = rb->a.offset;
        done.count = rb->a.count;
        done.exec_s = rb->done.exec_s;
        // G_p of a remote PU: its inputs crossing the network, StarPU's acquisition on its
        // rank, and its results crossing back.
        done.transfer_s = rb->done.transfer_s + (now - rb->recv_posted_us) * 1e-6;
        done.end_s = (now - t0_us_) * 1e-6;
        done.submitted_s = (rb->sent_us - t0_us_) * 1e-6;
        const ClusterPu &pu = run_.pus[static_cast<size_t>(rb->a.worker)];
        auto g = global_of_.find({pu.rank, rb->done.worker});
        const int total_index = g != global_of_.end() ? g->second : rb->a.worker;
        std::vector<Assignment> next;
        std::unique_ptr<PuRefit> refit;
        {
            std::lock_guard<std::mutex> lock(run_.mutex);
            refit = run_.dispatcher->prepare_refit(done);
        }
        // As in block_finished: the remote PU's refit does not hold up rank 0's own workers.
        if (refit)
            refit->run();
        {
            std::lock_guard<std::mutex> lock(run_.mutex);
            WorkerTotals &t = run_.totals[static_cast<size_t>(total_index)];
            ++t.blocks;
            t.elements += done.count;
            t.busy_s += done.exec_s;
            t.transfer_s += done.transfer_s;
            ++run_.blocks_done;
            run_.elements_done += done.count;
            next = run_.dispatcher->complete(done, refit.get());
        }
        submit_all(run_, next);
    }

    Run &run_;
    MPI_Comm comm_;
    double t0_us_ = 0;
    uint64_t next_seq_ = 0;
    std::map<uint64_t, std::unique_ptr<RemoteBlock>> remote_;  // main thread only
    std::map<std::pair<int, int>, int> global_of_;             // (rank, worker) -> PU id
};

// ---- ranks other than 0

struct ServedBlock {
    struct Served *served;
    WireAssign assign;
    BlockBuffers buffers;
    double posted_us = 0;
    std::atomic<double> inputs_in_us{0};
    std::atomic<unsigned> inputs_pending{0};
    WireDone done{};
};

struct Served {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<ServedBlock *> finished;
};

void served_input_arrived(void *arg)
{
    auto *b = static_cast<ServedBlock *>(arg);
    if (--b->inputs_pending == 0)
        b->inputs_in_us = starpu_timing_now();
}

void served_block_finished(void *arg)
{
    auto *b = static_cast<ServedBlock *>(arg);
    struct starpu_task *task = starpu_task_get_current();
    b->done.seq = b->assign.seq;
    b->done.worker = starpu_worker_get_id();
    if (task && task->profiling_info) {
        const struct starpu_profiling_task_info *info = task->profiling_info;
        b->done.worker = info->workerid;
        b->done.exec_s = seconds_between(info->start_time, info->end_time);
        b->done.transfer_s = seconds_between(info->acquire_data_start_time, info->acquire_data_end_time);
    }
    if (b->posted_us > 0 && b->inputs_in_us.load() > 0)
        b->done.transfer_s += (b->inputs_in_us.load() - b->posted_us) * 1e-6;
    std::lock_guard<std::mutex> lock(b->served->mutex);
    b->served->finished.push_back(b);
    b->served->changed.notify_all();
}

// Runs the blocks rank 0 sends until it says stop; returns the job's status.
int serve_blocks(const hetpu_divisible_job &job, MPI_Comm comm, Run &totals_run)
{
    Served served;
    unsigned in_flight = 0;
    bool stop = false;
    int status = 0;
    auto send_done = [&](const WireDone &d) { MPI_Send(&d, sizeof d, MPI_BYTE, 0, kTagDone, comm); };
    while (!stop || in_flight > 0) {
        bool progressed = false;
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(0, MPI_ANY_TAG, comm, &flag, &st);
        if (flag && st.MPI_TAG == kTagStop) {
            MPI_Recv(&status, 1, MPI_INT, 0, kTagStop, comm, MPI_STATUS_IGNORE);
            stop = true;
            progressed = true;
        } else if (flag && st.MPI_TAG == kTagAssign) {
            progressed = true;
            auto *b = new ServedBlock;
            b->served = &served;
            MPI_Recv(&b->assign, sizeof b->assign, MPI_BYTE, 0, kTagAssign, comm, MPI_STATUS_IGNORE);
            struct starpu_task *task = starpu_task_create();
            int rc = job.fill_task(job.arg, b->assign.offset, b->assign.count, task);
            if (rc == 0)
                rc = block_buffers(job, task, b->buffers);
            if (rc == 0) {
                unsigned inputs = 0;
                for (size_t i = 0; i < b->buffers.handles.size(); ++i)
                    inputs += b->buffers.inbound[i] ? 1 : 0;
                b->inputs_pending = inputs;
                b->posted_us = starpu_timing_now();
                // The task reads these handles, so StarPU orders it after the receives.
                for (size_t i = 0; i < b->buffers.handles.size(); ++i)
                    if (b->buffers.inbound[i])
                        starpu_mpi_irecv_detached(b->buffers.handles[i], 0,
                                                  block_data_tag(b->assign.seq, b->buffers.index[i]), MPI_COMM_WORLD,
                                                  served_input_arrived, b);
                task->callback_func = served_block_finished;
                task->callback_arg = b;
                if (b->assign.worker >= 0) {
                    task->execute_on_a_specific_worker = 1;
                    task->workerid = static_cast<unsigned>(b->assign.worker);
                }
                rc = starpu_task_submit(task);
                if (rc == 0) {
                    ++in_flight;
                    continue;
                }
                task->callback_arg = nullptr;
            }
            discard_unsubmitted(task);
            unregister_all(b->buffers);
            WireDone d{};
            d.seq = b->assign.seq;
            d.error = rc < 0 ? rc : -rc;
            send_done(d);
            delete b;
        }
        std::vector<ServedBlock *> finished;
        {
            std::lock_guard<std::mutex> lock(served.mutex);
            finished.swap(served.finished);
        }
        for (ServedBlock *b : finished) {
            std::unique_ptr<ServedBlock> owned(b);
            --in_flight;
            progressed = true;
            for (size_t i = 0; i < b->buffers.handles.size(); ++i)
                if (b->buffers.outbound[i])
                    starpu_mpi_isend_detached(b->buffers.handles[i], 0,
                                              block_data_tag(b->assign.seq, b->buffers.index[i]), MPI_COMM_WORLD,
                                              nullptr, nullptr);
            send_done(b->done);
            {
                std::lock_guard<std::mutex> lock(totals_run.mutex);
                ++totals_run.blocks_done;
                totals_run.elements_done += b->assign.count;
            }
            // Waits for the sends above (rank 0 posts its receives on DONE): the app
            // may free these buffers as soon as hetpu_divisible_run() returns.
            unregister_all(b->buffers);
        }
        if (!progressed) {
            std::unique_lock<std::mutex> lock(served.mutex);
            if (served.finished.empty())
                served.changed.wait_for(lock, kPollPeriod);
        }
    }
    return status;
}

int run_multi_rank(const hetpu_divisible_job &job, hetpu_divisible_report *report, const BlockRules &rules,
                   const std::vector<PlannerWorker> &local, const char *label)
{
    const int rank = mpi_rank(), size = mpi_size();
    MPI_Comm comm = mpi_control_comm();
    Run run;
    run.job = &job;
    std::vector<ClusterPu> pus = gather_pus(local, comm, rank, size);

    // Rank 0 builds the one planner; every rank learns whether it could.
    int status = 0;
    uint64_t fixed_block = 0;
    if (rank == 0) {
        if (pus.empty()) {
            std::fprintf(stderr, "hetpu: %s: no worker of any rank can run the job's codelet\n", label);
            status = -ENODEV;
        } else {
            std::vector<PlannerWorker> workers = planner_workers(pus);
            std::unique_ptr<BlockPlanner> planner;
            status = make_job_planner(job, workers, rules, label, planner, fixed_block);
            if (status == 0) {
                run.planner_places = planner->assigns_workers();
                run.planner =
                    run.planner_places ? std::move(planner) : std::make_unique<PerPuPlanner>(std::move(planner));
            }
        }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, comm);
    if (status != 0)
        return status;

    if (starpu_profiling_status_get() != STARPU_PROFILING_ENABLE)
        starpu_profiling_status_set(STARPU_PROFILING_ENABLE);

    if (rank != 0) {
        status = serve_blocks(job, comm, run);
        if (report) {
            std::memset(report, 0, sizeof *report);
            report->ranks = size;
            report->blocks = run.blocks_done;
            report->elements = run.elements_done;
        }
        return status;
    }

    run.pus = pus;
    run.global_of_local.assign(STARPU_NMAXWORKERS, -1);
    for (size_t g = 0; g < pus.size(); ++g)
        if (pus[g].rank == 0 && pus[g].local_worker >= 0 && pus[g].local_worker < STARPU_NMAXWORKERS)
            run.global_of_local[static_cast<size_t>(pus[g].local_worker)] = static_cast<int>(g);
    if (run.totals.size() < pus.size())
        run.totals.resize(pus.size());
    std::vector<int> ids;
    for (size_t g = 0; g < pus.size(); ++g)
        ids.push_back(static_cast<int>(g));
    run.dispatcher = std::make_unique<BlockDispatcher>(rules, *run.planner, ids);

    Lead lead(run, comm, pus);
    const double t0 = starpu_timing_now();
    run.t0_us = t0;
    std::vector<Assignment> first;
    {
        std::lock_guard<std::mutex> lock(run.mutex);
        first = run.dispatcher->start();
    }
    {
        WorkersPausedForSubmission paused(first.size());
        submit_all(run, first, &paused);
    }
    lead.loop(t0);
    const double makespan_s = (starpu_timing_now() - t0) * 1e-6;
    for (int r = 1; r < size; ++r)
        MPI_Send(&run.error, 1, MPI_INT, r, kTagStop, comm);

    if (report) {
        fill_report_header(*report, run, makespan_s, fixed_block, size);
        for (size_t g = 0; g < pus.size() && report->nworkers < STARPU_NMAXWORKERS; ++g) {
            hetpu_worker_report &r = report->workers[report->nworkers++];
            const WorkerTotals &t = run.totals[g];
            r.workerid = pus[g].local_worker;
            r.type = pus[g].kind == WorkerKind::OpenCL ? STARPU_OPENCL_WORKER
                     : pus[g].kind == WorkerKind::Cuda ? STARPU_CUDA_WORKER
                                                       : STARPU_CPU_WORKER;
            std::snprintf(r.name, sizeof r.name, "%s", pus[g].name.c_str());
            r.blocks = t.blocks;
            r.elements = t.elements;
            r.busy_s = t.busy_s;
            r.transfer_s = t.transfer_s;
            r.rank = pus[g].rank;
            std::snprintf(r.host, sizeof r.host, "%s", pus[g].host.c_str());
        }
    }
    if (run.error == 0 && run.elements_done != rules.total) {
        std::fprintf(stderr, "hetpu: %s: internal error: %llu of %llu elements processed\n", label,
                     (unsigned long long)run.elements_done, (unsigned long long)rules.total);
        return -EIO;
    }
    return run.error;
}

#endif  // HETPU_HAVE_MPI

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
    warn_of_submission_throttle(label);
    BlockRules rules{job->total, job->granule, job->min_block, job->name ? job->name : ""};
    try {
        normalize_block_rules(rules);
    } catch (const std::invalid_argument &e) {
        std::fprintf(stderr, "hetpu: %s: %s\n", label, e.what());
        return -EINVAL;
    }
    std::vector<PlannerWorker> workers = eligible_workers(*job);
#ifdef HETPU_HAVE_MPI
    // Every rank gets here with the same job (same rules), so every rank takes this branch.
    if (mpi_size() > 1) {
        try {
            return run_multi_rank(*job, report, rules, workers, label);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "hetpu: fatal: %s in a multi-rank run\n", e.what());
            std::abort();  // other ranks wait in collectives: a return would hang the job
        }
    }
#endif
    if (workers.empty()) {
        std::fprintf(stderr, "hetpu: %s: no worker can run the job's codelet\n", label);
        return -ENODEV;
    }

    Run run;
    run.job = job;
    uint64_t fixed_block = 0;
    if (int rc = make_job_planner(*job, workers, rules, label, run.planner, fixed_block); rc)
        return rc;
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
    {
        WorkersPausedForSubmission paused(first.size());
        submit_all(run, first, &paused);
    }
    wait_until_done(run);
    const double makespan_s = (starpu_timing_now() - t0) * 1e-6;

    if (run.dispatcher->forced_remainder())
        std::fprintf(stderr, "hetpu: %s: planner %s declined every worker; the remainder was forced onto one worker\n",
                     label, run.planner->name().c_str());

    if (report) {
        fill_report_header(*report, run, makespan_s, fixed_block, 1);
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
            r.rank = 0;
            std::snprintf(r.host, sizeof r.host, "%s", hetpu_host_name());
        }
    }
    if (run.error == 0 && run.elements_done != rules.total) {
        std::fprintf(stderr, "hetpu: %s: internal error: %llu of %llu elements processed\n", label,
                     (unsigned long long)run.elements_done, (unsigned long long)rules.total);
        return -EIO;
    }
    return run.error;
}
