// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/mpi_run.h"

#ifdef HETPU_HAVE_MPI

#include <hetpu/hetpu.h>
#include <hetpu/mpi.h>
#include <starpu_mpi.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/divisible/block_run.h"
#include "runtime/divisible/run_copies.h"
#include "runtime/divisible/core/planner_extensions.h"
#include "runtime/mpi/mpi_block_data.h"
#include "runtime/mpi/mpi_rank_report.h"
#include "runtime/mpi/mpi_state.h"
#include "runtime/mpi/rank_watch.h"
#include "runtime/divisible/workers_paused.h"

namespace hetpu {
namespace {

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
    Lead(Run &run, MPI_Comm comm, const std::vector<ClusterPu> &pus, RankTraffic &traffic)
        : traffic_(traffic), run_(run), comm_(comm)
    {
        for (size_t g = 0; g < pus.size(); ++g)
            global_of_[{pus[g].rank, pus[g].local_worker}] = static_cast<int>(g);
    }

    void loop(double t0_us, RankWatch &watch)
    {
        t0_us_ = t0_us;
        for (;;) {
            watch.receive();
            {
                std::unique_lock<std::mutex> lock(run_.mutex);
                const uint64_t done = run_.elements_done;
                const double longest = run_.longest_block_s;
                lock.unlock();
                watch.tick(done, false, longest);  // rank 0's heartbeat says only that it is there
            }
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
        traffic_.data_sent += rb->buffers.inbound_bytes();
        traffic_.control_sent += sizeof(WireAssign);
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
            traffic_.control_received += sizeof d;
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
            traffic_.data_received += rb.buffers.outbound_bytes();
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
            run_.longest_block_s = std::max(run_.longest_block_s, done.exec_s + done.transfer_s);
            ++run_.blocks_done;
            run_.elements_done += done.count;
            next = run_.dispatcher->complete(done, refit.get());
        }
        submit_all(run_, next);
    }

    RankTraffic &traffic_;
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
int serve_blocks(const hetpu_divisible_job &job, MPI_Comm comm, Run &totals_run, RankTraffic &traffic, RankWatch &watch)
{
    Served served;
    unsigned in_flight = 0;
    double longest_block_s = 0;
    bool stop = false;
    int status = 0;
    auto send_done = [&](const WireDone &d) {
        traffic.control_sent += sizeof d;
        MPI_Send(&d, sizeof d, MPI_BYTE, 0, kTagDone, comm);
    };
    while (!stop || in_flight > 0) {
        bool progressed = false;
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(0, MPI_ANY_TAG, comm, &flag, &st);
        if (flag && (st.MPI_TAG == kTagAlive || st.MPI_TAG == kTagLivenessEnd)) {
            progressed = watch.receive();
        } else if (flag && st.MPI_TAG == kTagStop) {
            MPI_Recv(&status, 1, MPI_INT, 0, kTagStop, comm, MPI_STATUS_IGNORE);
            stop = true;
            progressed = true;
        } else if (flag && st.MPI_TAG == kTagAssign) {
            progressed = true;
            auto *b = new ServedBlock;
            b->served = &served;
            MPI_Recv(&b->assign, sizeof b->assign, MPI_BYTE, 0, kTagAssign, comm, MPI_STATUS_IGNORE);
            traffic.control_received += sizeof b->assign;
            struct starpu_task *task = starpu_task_create();
            int rc = job.fill_task(job.arg, b->assign.offset, b->assign.count, task);
            if (rc == 0)
                rc = block_buffers(job, task, b->buffers);
            if (rc == 0) {
                unsigned inputs = 0;
                for (size_t i = 0; i < b->buffers.handles.size(); ++i)
                    inputs += b->buffers.inbound[i] ? 1 : 0;
                b->inputs_pending = inputs;
                traffic.data_received += b->buffers.inbound_bytes();
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
            traffic.data_sent += b->buffers.outbound_bytes();
            for (size_t i = 0; i < b->buffers.handles.size(); ++i)
                if (b->buffers.outbound[i])
                    starpu_mpi_isend_detached(b->buffers.handles[i], 0,
                                              block_data_tag(b->assign.seq, b->buffers.index[i]), MPI_COMM_WORLD,
                                              nullptr, nullptr);
            send_done(b->done);
            longest_block_s = std::max(longest_block_s, b->done.exec_s + b->done.transfer_s);
            {
                std::lock_guard<std::mutex> lock(totals_run.mutex);
                ++totals_run.blocks_done;
                totals_run.elements_done += b->assign.count;
            }
            // Waits for the sends above (rank 0 posts its receives on DONE): the app
            // may free these buffers as soon as hetpu_divisible_run() returns.
            unregister_all(b->buffers);
        }
        {
            uint64_t done = 0;
            {
                std::lock_guard<std::mutex> lock(totals_run.mutex);
                done = totals_run.elements_done;
            }
            watch.tick(done, in_flight > 0, longest_block_s);
        }
        if (!progressed) {
            std::unique_lock<std::mutex> lock(served.mutex);
            if (served.finished.empty())
                served.changed.wait_for(lock, kPollPeriod);
        }
    }
    watch.finish(totals_run.elements_done, longest_block_s);
    return status;
}

}  // namespace

int run_multi_rank(const hetpu_divisible_job &job, hetpu_divisible_report *report, const BlockRules &rules,
                   const std::vector<PlannerWorker> &local, const char *label)
{
    const int rank = mpi_rank(), size = mpi_size();
    MPI_Comm comm = mpi_control_comm();
    std::shared_ptr<Run> run_ptr = make_run(job);
    Run &run = *run_ptr;
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

    RankTraffic traffic;
    RankWatch watch(comm, label, traffic);
    if (rank != 0) {
        watch.begin();
        status = serve_blocks(job, comm, run, traffic, watch);
        if (report) {
            std::memset(report, 0, sizeof *report);
            report->ranks = size;
            report->blocks = run.blocks_done;
            report->elements = run.elements_done;
            std::snprintf(report->mpi_planner, sizeof report->mpi_planner, "central");
        }
        gather_rank_reports(comm, 0, 0, run.elements_done, traffic, report);
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
    // Blocks are relayed through rank 0 and their results come home to it: no backup copies.
    choose_copies(run, false, false);

    Lead lead(run, comm, pus, traffic);
    const double t0 = start_run(run);
    watch.begin();
    lead.loop(t0, watch);
    const double makespan_s = (starpu_timing_now() - t0) * 1e-6;
    for (int r = 1; r < size; ++r)
        MPI_Send(&run.error, 1, MPI_INT, r, kTagStop, comm);
    {
        std::unique_lock<std::mutex> lock(run.mutex);
        const uint64_t done = run.elements_done;
        const double longest = run.longest_block_s;
        lock.unlock();
        watch.finish(done, longest);
    }

    if (report) {
        fill_report_header(*report, run, makespan_s, fixed_block, size);
        std::snprintf(report->mpi_planner, sizeof report->mpi_planner, "central");
        report->share_count = rules.total;  // every result came home to rank 0
        add_worker_reports(*report, pus, run.totals);
    }
    uint64_t mine = 0;
    for (size_t g = 0; g < pus.size(); ++g)
        if (pus[g].rank == 0)
            mine += run.totals[g].elements;
    gather_rank_reports(comm, 0, rules.total, mine, traffic, report);
    add_silences(watch, report);
    return run_status(run, rules, label);
}

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
