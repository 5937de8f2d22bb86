// SPDX-License-Identifier: LGPL-2.1-or-later
// The per-node multi-rank runner (HETPU_MPI_PLANNER=per-node): data owned by the ranks
// that use them, a planner per rank, one coordinator on rank 0 that only re-shares.
//
// Every rank runs its share as a single process would (runtime/divisible/block_run.h: its own
// planner, dispatcher and completion callbacks), and its main thread, in loop(), reports
// node-level progress to the coordinator and carries out re-sharing moves: the lender
// sends a range's inputs directly to the borrower, the borrower runs it and sends its
// results directly back. The coordinator (rank 0's main thread, beside its own rank's
// work) decides with the pure core runtime/mpi/core/node_shares.h and ends the job when every
// rank is idle and no move is under way.
#include "runtime/mpi/mpi_owned_run.h"

#ifdef HETPU_HAVE_MPI

#include <hetpu/hetpu.h>
#include <starpu_mpi.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/settings.h"
#include "runtime/divisible/block_run.h"
#include "runtime/mpi/core/node_shares.h"
#include "runtime/mpi/mpi_block_data.h"
#include "runtime/mpi/mpi_rank_report.h"
#include "runtime/mpi/mpi_state.h"
#include "runtime/mpi/node_rates.h"
#include "runtime/start/starpu_start.h"

namespace hetpu {
namespace {

constexpr int kTagReport = 11;  // rank -> coordinator
constexpr int kTagGive = 12;    // coordinator -> lender
constexpr int kTagTake = 13;    // lender -> borrower (directly)
constexpr int kTagStop = 14;    // coordinator -> every rank
constexpr auto kPollPeriod = std::chrono::microseconds(300);
// Progress reports every 2% of the time run so far, between 5 ms and this.
constexpr double kLongestReportPeriod = 0.05;

enum ReportEvent : int32_t { kProgress = 0, kGave = 1, kArrived = 2 };

// Control messages, sent as bytes (every rank runs the same binary). Data never travel in
// them: they go with StarPU-MPI.
struct WireReport {
    int32_t rank;
    int32_t event;   // ReportEvent
    uint64_t move;   // kGave, kArrived: which move
    uint64_t moved;  // kGave: elements handed over (0: nothing was left to give)
    uint64_t done;   // elements this rank's workers finished
    uint64_t remaining;
    uint64_t in_flight;
    double elapsed_s;
    // Its workers' speeds on their last blocks, summed: what the node sustains now (a
    // planner's first, small blocks run slower; done / elapsed undercounts running blocks).
    double rate;
    int32_t idle;   // nothing left, nothing running, no borrowed result still to send
    int32_t error;  // 0 or -errno: the job must stop
};

struct WireGive {
    uint64_t move;
    int32_t to;
    int32_t pad;
    uint64_t count;
};

struct WireTake {
    uint64_t move;
    int32_t from;
    int32_t pad;
    uint64_t offset;
    uint64_t count;
};

// StarPU-MPI data tags of a move: its inputs one way, its results the other.
int64_t move_tag(uint64_t move, bool results, unsigned index)
{
    return static_cast<int64_t>((move * 2 + (results ? 1 : 0)) * 32 + index);
}

struct Incoming {  // a borrowed range whose inputs are on their way
    int from = -1;
    Block range;
    BlockBuffers buffers;
    unsigned pending = 0;  // guarded by Run::mutex
};

struct Borrowed {  // a borrowed range running here
    int from = -1;
    Block range;
    uint64_t home = 0;  // elements whose results are back in main memory
};

struct Lent {  // a range of this rank's share running elsewhere
    BlockBuffers buffers;
    unsigned pending = 0;  // results still to arrive; guarded by Run::mutex
};

struct Coordinator {
    std::vector<NodeState> nodes;
    std::vector<bool> idle;
    std::map<uint64_t, std::pair<int, int>> pending;  // move -> (from, to)
    NodeNetwork network;
    uint64_t next_move = 0;
    unsigned moves = 0;
    double planning_s = 0;
    bool dirty = false;
    bool stopping = false;
    int status = 0;
};

class Node;

struct ArrivalArg {
    Node *node;
    uint64_t move;
    bool results;  // false: inputs of a borrowed range; true: results of a lent one
};

class Node {
public:
    Node(const hetpu_divisible_job &job, const hetpu_divisible_placement &placement, Run &run, MPI_Comm comm,
         Block share, std::vector<int> workers)
        : job_(job), placement_(placement), run_(run), comm_(comm), share_(share), workers_(std::move(workers))
    {
        MPI_Comm_rank(comm, &rank_);
        MPI_Comm_size(comm, &size_);
        handed_ = share.count;
    }

    void make_coordinator(std::vector<NodeState> nodes, const NodeNetwork &network)
    {
        coord_ = std::make_unique<Coordinator>();
        coord_->idle.assign(nodes.size(), false);
        coord_->nodes = std::move(nodes);
        coord_->network = network;
    }

    // Runs until the coordinator says stop and everything of this rank is settled.
    // Returns the job's status (the same on every rank).
    int loop()
    {
        t0_us_ = run_.t0_us;
        report(kProgress, 0, 0, true);
        for (;;) {
            bool progressed = receive_messages();
            progressed |= settle_arrivals();
            progressed |= return_finished_ranges();
            if (coord_)
                progressed |= coordinate();
            if (!stopped_)
                report(kProgress, 0, 0, false);
            if (stopped_ && settled())
                return stop_status_;
            if (!progressed) {
                std::unique_lock<std::mutex> lock(run_.mutex);
                run_.changed.wait_for(lock, kPollPeriod);
            }
        }
    }

    const RankTraffic &traffic() const { return traffic_; }
    // Seconds from the start until this rank last ran out of work.
    double busy_s() const { return busy_s_; }
    unsigned moves() const { return coord_ ? coord_->moves : 0; }
    double coordinator_s() const { return coord_ ? coord_->planning_s : 0; }

    static void arrived(void *arg)
    {
        std::unique_ptr<ArrivalArg> a(static_cast<ArrivalArg *>(arg));
        Node &n = *a->node;
        std::lock_guard<std::mutex> lock(n.run_.mutex);
        if (a->results) {
            auto it = n.lent_.find(a->move);
            if (it != n.lent_.end() && --it->second.pending == 0)
                n.lent_home_.push_back(a->move);
        } else {
            auto it = n.incoming_.find(a->move);
            if (it != n.incoming_.end() && --it->second.pending == 0)
                n.inputs_in_.push_back(a->move);
        }
        n.run_.changed.notify_all();
    }

private:
    // ---- messages

    template <typename T> void send(const T &msg, int to, int tag)
    {
        if (to == rank_) {  // rank 0 talking to itself (coordinator and node in one loop)
            local_.push_back({tag, std::string(reinterpret_cast<const char *>(&msg), sizeof msg)});
            return;
        }
        traffic_.control_sent += sizeof msg;
        MPI_Send(&msg, sizeof msg, MPI_BYTE, to, tag, comm_);
    }

    bool receive_messages()
    {
        bool any = false;
        std::vector<std::pair<int, std::string>> local;
        local.swap(local_);
        for (auto &[tag, bytes] : local) {
            dispatch(tag, rank_, bytes.data());
            any = true;
        }
        for (;;) {
            int flag = 0;
            MPI_Status status;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &status);
            if (!flag)
                return any;
            int bytes = 0;
            MPI_Get_count(&status, MPI_BYTE, &bytes);
            std::vector<char> buf(static_cast<size_t>(bytes));
            MPI_Recv(buf.data(), bytes, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, comm_, MPI_STATUS_IGNORE);
            traffic_.control_received += static_cast<uint64_t>(bytes);
            dispatch(status.MPI_TAG, status.MPI_SOURCE, buf.data());
            any = true;
        }
    }

    void dispatch(int tag, int source, const char *bytes)
    {
        switch (tag) {
        case kTagReport: {
            WireReport r;
            std::memcpy(&r, bytes, sizeof r);
            if (coord_)
                heard(r);
            break;
        }
        case kTagGive: {
            WireGive g;
            std::memcpy(&g, bytes, sizeof g);
            give(g);
            break;
        }
        case kTagTake: {
            WireTake t;
            std::memcpy(&t, bytes, sizeof t);
            take(t, source);
            break;
        }
        case kTagStop: {
            int32_t status;
            std::memcpy(&status, bytes, sizeof status);
            stopped_ = true;
            stop_status_ = status;
            if (status != 0) {
                std::lock_guard<std::mutex> lock(run_.mutex);
                run_.dispatcher->stop();
            }
            break;
        }
        default: break;
        }
    }

    // ---- progress reports

    void report(ReportEvent event, uint64_t move, uint64_t moved, bool force)
    {
        WireReport r;
        std::memset(&r, 0, sizeof r);
        const double now = starpu_timing_now();
        {
            std::lock_guard<std::mutex> lock(run_.mutex);
            r.done = run_.elements_done;
            r.remaining = run_.dispatcher->remaining();
            r.error = run_.error;
            // Once every worker has run a block: a partial sum makes the rank look slower.
            for (int w : workers_) {
                const double rate = run_.totals[static_cast<size_t>(w)].last_rate;
                if (rate <= 0) {
                    r.rate = 0;
                    break;
                }
                r.rate += rate;
            }
        }
        const uint64_t running = handed_ - r.remaining - r.done;
        r.idle = settled_locally(r.remaining, running) ? 1 : 0;
        const double elapsed = (now - t0_us_) * 1e-6;
        r.in_flight = work_left(handed_ - r.remaining, r.done, r.rate, elapsed);
        if (r.idle && !last_.idle)
            busy_s_ = elapsed;
        // Often enough for a slow rank's tail to be re-shared in time, rarely enough that
        // 1,024 ranks' reports stay a trickle at rank 0.
        const double period = std::min(kLongestReportPeriod, std::max(0.005, 0.02 * elapsed));
        const bool changed =
            r.done != last_.done || r.remaining != last_.remaining || r.idle != last_.idle || r.error != last_.error;
        if (event == kProgress && !force &&
            !(changed && (elapsed - last_.elapsed_s >= period || r.idle != last_.idle || r.error != last_.error)))
            return;
        r.rank = rank_;
        r.event = event;
        r.move = move;
        r.moved = moved;
        r.elapsed_s = elapsed;
        last_ = r;
        send(r, 0, kTagReport);
    }

    bool settled_locally(uint64_t remaining, uint64_t in_flight)
    {
        std::lock_guard<std::mutex> lock(run_.mutex);
        return remaining == 0 && in_flight == 0 && run_.busy_callbacks == 0 && run_.pending_writebacks == 0 &&
               incoming_.empty() && borrowed_.empty();
    }

    // After stop: every local block done, every borrowed range returned, every lent one home.
    bool settled()
    {
        std::lock_guard<std::mutex> lock(run_.mutex);
        return run_.dispatcher->finished() && run_.busy_callbacks == 0 && run_.pending_writebacks == 0 &&
               incoming_.empty() && borrowed_.empty() && lent_.empty();
    }

    // ---- re-sharing, lender side

    void give(const WireGive &g)
    {
        Block tail;
        {
            std::lock_guard<std::mutex> lock(run_.mutex);
            // Only the rank's own share is lent: a borrowed range goes back to its owner.
            const Block back = run_.dispatcher->back();
            if (!stopped_ && back.count > 0 && back.offset >= share_.offset &&
                back.offset + back.count <= share_.offset + share_.count)
                tail = run_.dispatcher->take_tail(g.count);
        }
        if (tail.count > 0) {
            Lent lent;
            int rc = register_block_buffers(job_, tail.offset, tail.count, lent.buffers);
            if (rc != 0) {
                unregister_all(lent.buffers);
                std::fprintf(stderr, "hetpu: %s: rank %d cannot lend [%llu, %llu): %s\n", label(), rank_,
                             (unsigned long long)tail.offset, (unsigned long long)(tail.offset + tail.count),
                             std::strerror(-rc));
                {
                    std::lock_guard<std::mutex> lock(run_.mutex);
                    run_.dispatcher->put_back(tail);
                    if (run_.error == 0)
                        run_.error = rc;
                }
                tail.count = 0;
            } else {
                lent.pending = lent.buffers.count_outbound();
                const BlockBuffers &b = lent.buffers;
                traffic_.data_sent += b.inbound_bytes();
                traffic_.data_received += b.outbound_bytes();
                {
                    std::lock_guard<std::mutex> lock(run_.mutex);
                    handed_ -= tail.count;
                    if (lent.pending == 0)
                        lent_home_.push_back(g.move);
                    lent_[g.move] = std::move(lent);
                }
                const BlockBuffers &kept = lent_.at(g.move).buffers;
                for (size_t i = 0; i < kept.handles.size(); ++i) {
                    if (kept.inbound[i])
                        starpu_mpi_isend_detached(kept.handles[i], g.to, move_tag(g.move, false, kept.index[i]),
                                                  MPI_COMM_WORLD, nullptr, nullptr);
                    if (kept.outbound[i])
                        starpu_mpi_irecv_detached(kept.handles[i], g.to, move_tag(g.move, true, kept.index[i]),
                                                  MPI_COMM_WORLD, &Node::arrived, new ArrivalArg{this, g.move, true});
                }
                WireTake t{g.move, rank_, 0, tail.offset, tail.count};
                send(t, g.to, kTagTake);
            }
        }
        report(kGave, g.move, tail.count, true);
    }

    // ---- re-sharing, borrower side

    void take(const WireTake &t, int from)
    {
        Incoming in;
        in.from = from;
        in.range = {t.offset, t.count};
        int rc = placement_.hold ? placement_.hold(placement_.arg, t.offset, t.count, HETPU_HOLD_BORROWED) : 0;
        if (rc == 0)
            rc = register_block_buffers(job_, t.offset, t.count, in.buffers);
        if (rc != 0) {
            // The lender's inputs and its wait for results must still be answered: the
            // job stops, but without a hang.
            std::fprintf(stderr, "hetpu: %s: rank %d cannot hold [%llu, %llu) lent by rank %d: %s\n", label(), rank_,
                         (unsigned long long)t.offset, (unsigned long long)(t.offset + t.count), from,
                         std::strerror(rc < 0 ? -rc : rc));
            std::lock_guard<std::mutex> lock(run_.mutex);
            if (run_.error == 0)
                run_.error = rc < 0 ? rc : -rc;
            return;
        }
        in.pending = in.buffers.count_inbound();
        traffic_.data_received += in.buffers.inbound_bytes();
        {
            std::lock_guard<std::mutex> lock(run_.mutex);
            incoming_[t.move] = std::move(in);
            if (incoming_[t.move].pending == 0)
                inputs_in_.push_back(t.move);
        }
        const BlockBuffers &b = incoming_.at(t.move).buffers;
        for (size_t i = 0; i < b.handles.size(); ++i)
            if (b.inbound[i])
                starpu_mpi_irecv_detached(b.handles[i], from, move_tag(t.move, false, b.index[i]), MPI_COMM_WORLD,
                                          &Node::arrived, new ArrivalArg{this, t.move, false});
    }

    // Borrowed ranges whose inputs are in: their blocks join this rank's work.
    bool settle_arrivals()
    {
        std::vector<uint64_t> in, home;
        {
            std::lock_guard<std::mutex> lock(run_.mutex);
            in.swap(inputs_in_);
            home.swap(lent_home_);
        }
        for (uint64_t move : home) {
            unregister_all(lent_.at(move).buffers);  // the results are in this rank's memory
            std::lock_guard<std::mutex> lock(run_.mutex);
            lent_.erase(move);
        }
        for (uint64_t move : in) {
            Incoming &inc = incoming_.at(move);
            unregister_all(inc.buffers);  // the inputs are in this rank's memory now
            std::vector<Assignment> next;
            {
                std::lock_guard<std::mutex> lock(run_.mutex);
                borrowed_[move] = Borrowed{inc.from, inc.range, 0};
                handed_ += inc.range.count;
                if (!stopped_ || stop_status_ == 0)
                    next = run_.dispatcher->add_range(inc.range.offset, inc.range.count);
                incoming_.erase(move);
            }
            submit_all(run_, next);
            report(kArrived, move, 0, true);
        }
        return !in.empty() || !home.empty();
    }

    // Borrowed ranges all of whose results are home go back to their owners (at once
    // after a failed job, whatever they hold, so the owner's wait ends).
    bool return_finished_ranges()
    {
        std::vector<Block> homes;
        std::vector<uint64_t> ready;
        {
            std::lock_guard<std::mutex> lock(run_.mutex);
            homes.swap(run_.homes);
            for (const Block &h : homes)
                for (auto &[move, b] : borrowed_)
                    if (h.offset >= b.range.offset && h.offset < b.range.offset + b.range.count)
                        b.home += h.count;
            const bool abandon = stopped_ && stop_status_ != 0 && run_.dispatcher->finished() &&
                                 run_.busy_callbacks == 0 && run_.pending_writebacks == 0;
            for (auto &[move, b] : borrowed_)
                if (b.home >= b.range.count || abandon)
                    ready.push_back(move);
        }
        for (uint64_t move : ready) {
            const Borrowed b = borrowed_.at(move);
            BlockBuffers out;
            int rc = register_block_buffers(job_, b.range.offset, b.range.count, out);
            if (rc == 0) {
                traffic_.data_sent += out.outbound_bytes();
                for (size_t i = 0; i < out.handles.size(); ++i)
                    if (out.outbound[i])
                        starpu_mpi_isend_detached(out.handles[i], b.from, move_tag(move, true, out.index[i]),
                                                  MPI_COMM_WORLD, nullptr, nullptr);
            } else {
                std::fprintf(stderr, "hetpu: %s: rank %d cannot send the results of [%llu, %llu) back to rank %d: %s\n",
                             label(), rank_, (unsigned long long)b.range.offset,
                             (unsigned long long)(b.range.offset + b.range.count), b.from, std::strerror(-rc));
            }
            unregister_all(out);  // waits for the sends
            if (placement_.release)
                placement_.release(placement_.arg, b.range.offset, b.range.count);
            std::lock_guard<std::mutex> lock(run_.mutex);
            borrowed_.erase(move);
            if (rc != 0 && run_.error == 0)
                run_.error = rc;
        }
        return !homes.empty() || !ready.empty();
    }

    // ---- the coordinator (rank 0)

    void heard(const WireReport &r)
    {
        Coordinator &c = *coord_;
        if (r.rank < 0 || static_cast<size_t>(r.rank) >= c.nodes.size())
            return;
        NodeState &n = c.nodes[static_cast<size_t>(r.rank)];
        n.remaining = r.remaining;
        n.in_flight = r.in_flight;
        // A rank's first blocks (a planner's training) run below its speed: its measured
        // rate counts once 2% of its work is done (training is over), or once it ran dry;
        // until then the rate it sustained last time (if any) stands.
        const double work = static_cast<double>(r.done + r.remaining + r.in_flight);
        if (r.rate > 0 && (r.idle || static_cast<double>(r.done) >= 0.02 * work))
            n.rate = r.rate;
        c.idle[static_cast<size_t>(r.rank)] = r.idle != 0;
        if (r.error != 0 && c.status == 0)
            c.status = r.error;
        auto pending = c.pending.find(r.move);
        if (r.event == kGave && pending != c.pending.end()) {
            c.nodes[static_cast<size_t>(pending->second.first)].moving = false;
            if (r.moved == 0) {
                c.nodes[static_cast<size_t>(pending->second.second)].moving = false;
                c.pending.erase(pending);
            } else {
                ++c.moves;
            }
        } else if (r.event == kArrived && pending != c.pending.end()) {
            c.nodes[static_cast<size_t>(pending->second.second)].moving = false;
            c.pending.erase(pending);
        }
        c.dirty = true;
    }

    bool coordinate()
    {
        Coordinator &c = *coord_;
        if (c.stopping || !c.dirty)
            return false;
        c.dirty = false;
        bool all_idle = true;
        for (bool i : c.idle)
            all_idle = all_idle && i;
        if (c.status != 0 || (all_idle && c.pending.empty())) {
            // A failed job stops at once; the ranks settle what is under way first.
            c.stopping = true;
            for (int r = 0; r < size_; ++r)
                send(c.status, r, kTagStop);
            return true;
        }
        const double t0 = starpu_timing_now();
        std::vector<ShareMove> moves = plan_moves(c.nodes, c.network, run_.dispatcher->rules());
        c.planning_s += (starpu_timing_now() - t0) * 1e-6;
        for (const ShareMove &m : moves) {
            const uint64_t id = c.next_move++;
            c.pending[id] = {m.from, m.to};
            // Until the ranks report again, the coordinator counts the move as made.
            NodeState &from = c.nodes[static_cast<size_t>(m.from)], &to = c.nodes[static_cast<size_t>(m.to)];
            from.moving = to.moving = true;
            from.remaining -= std::min(from.remaining, m.count);
            to.remaining += m.count;
            WireGive g{id, m.to, 0, m.count};
            send(g, m.from, kTagGive);
        }
        return !moves.empty();
    }

    const char *label() const { return job_.name ? job_.name : "divisible job"; }

    const hetpu_divisible_job &job_;
    const hetpu_divisible_placement &placement_;
    Run &run_;
    MPI_Comm comm_;
    Block share_;
    std::vector<int> workers_;  // this rank's workers in the job
    int rank_ = 0, size_ = 1;
    double t0_us_ = 0;
    uint64_t handed_ = 0;  // elements this rank took on: its share - lent + borrowed
    WireReport last_{};
    double busy_s_ = 0;
    RankTraffic traffic_;
    bool stopped_ = false;
    int stop_status_ = 0;
    std::vector<std::pair<int, std::string>> local_;  // messages rank 0 sends itself
    std::unique_ptr<Coordinator> coord_;
    // Guarded by Run::mutex where StarPU-MPI callbacks touch them.
    std::map<uint64_t, Incoming> incoming_;
    std::map<uint64_t, Borrowed> borrowed_;
    std::map<uint64_t, Lent> lent_;
    std::vector<uint64_t> inputs_in_, lent_home_;
};

struct WireNode {
    int32_t pus;
    int32_t pad;
    double rate;           // elements per second this rank sustained on this job last time (0: unknown)
    uint64_t held_offset;  // the share the rank already holds (placement), count 0: none
    uint64_t held_count;
};

}  // namespace

int start_shares(const hetpu_divisible_job &job, const hetpu_divisible_placement *placement, const BlockRules &rules,
                 const std::vector<PlannerWorker> &local, const char *label, std::vector<NodeState> &nodes,
                 std::vector<Block> &shares, bool &held)
{
    const int rank = mpi_rank(), size = mpi_size();
    // Every rank's speed on this job last time (else its PU count) and what it holds.
    WireNode mine{static_cast<int32_t>(local.size()), 0, job.name ? load_node_rate(node_rate_key(job, local)) : 0.0,
                  placement ? placement->held_offset : 0, placement ? placement->held_count : 0};
    std::vector<WireNode> all(static_cast<size_t>(size));
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, mpi_control_comm());
    nodes.assign(static_cast<size_t>(size), NodeState{});
    std::vector<Block> held_shares(static_cast<size_t>(size));
    unsigned total_pus = 0;
    held = false;
    for (int r = 0; r < size; ++r) {
        const WireNode &w = all[static_cast<size_t>(r)];
        nodes[static_cast<size_t>(r)].rank = r;
        nodes[static_cast<size_t>(r)].pus = static_cast<unsigned>(w.pus);
        nodes[static_cast<size_t>(r)].rate = w.rate;
        total_pus += nodes[static_cast<size_t>(r)].pus;
        held_shares[static_cast<size_t>(r)] = {w.held_offset, w.held_count};
        held = held || w.held_count > 0;
    }
    if (total_pus == 0) {
        if (rank == 0)
            std::fprintf(stderr, "hetpu: %s: no worker of any rank can run the job's codelet\n", label);
        return -ENODEV;
    }
    if (held) {
        // Every rank sees the same figures, so every rank refuses together.
        const std::string error = held_shares_error(rules, held_shares);
        if (!error.empty()) {
            if (rank == 0)
                std::fprintf(stderr,
                             "hetpu: %s: the shares the ranks hold do not cover the job: %s (pass each rank the "
                             "share hetpu_mpi_share() gave it, or report.share_offset/share_count of a job over the "
                             "same data)\n",
                             label, error.c_str());
            return -EINVAL;
        }
        shares = held_shares;
        return 0;
    }
    // Every rank computes the same shares from the same figures: nothing to broadcast.
    shares = initial_shares(rules, nodes);
    return 0;
}

int run_per_node(const hetpu_divisible_job &job, const hetpu_divisible_placement &placement,
                 hetpu_divisible_report *report, const BlockRules &rules, const std::vector<PlannerWorker> &local,
                 const char *label)
{
    const int rank = mpi_rank(), size = mpi_size();
    MPI_Comm comm = mpi_control_comm();

    // 1. The coordinator's shares (or those the ranks already hold).
    std::vector<NodeState> nodes;
    std::vector<Block> shares;
    bool held = false;
    const double shares_t0 = starpu_timing_now();
    if (int rc = start_shares(job, &placement, rules, local, label, nodes, shares, held); rc != 0)
        return rc;
    const double shares_s = (starpu_timing_now() - shares_t0) * 1e-6;
    const Block share = shares[static_cast<size_t>(rank)];
    const std::string rate_key = node_rate_key(job, local);

    // 2. Each rank holds its share (allocates it, reads or generates its inputs).
    int rc = share.count > 0 && placement.hold && !held
                 ? placement.hold(placement.arg, share.offset, share.count, HETPU_HOLD_SHARE)
                 : 0;
    if (rc != 0)
        std::fprintf(stderr, "hetpu: %s: rank %d cannot hold its share [%llu, %llu): %s\n", label, rank,
                     (unsigned long long)share.offset, (unsigned long long)(share.offset + share.count),
                     std::strerror(rc < 0 ? -rc : rc));
    // 3. Its planner, over its own workers and its share.
    Run run;
    run.job = &job;
    run.track_homes = true;
    uint64_t fixed_block = 0;
    if (rc == 0 && !local.empty()) {
        BlockRules node_rules = rules;
        // A planner plans its own share (plb-hac's steps and tail follow it). Fixed blocks
        // keep the job's size rules: HETPU_BLOCK may exceed a share.
        const RegisteredPolicy *policy = running_hetpu_policy();
        if (policy && policy->make_planner && share.count >= rules.min_block)
            node_rules.total = share.count;
        rc = make_job_planner(job, local, node_rules, label, run.planner, fixed_block);
    }
    if (rc == 0 && !run.planner)
        run.planner = std::make_unique<FixedBlockPlanner>(rules.min_block);  // no worker: never asked
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, comm);
    if (worst != 0) {
        if (rc == 0 && rank == 0)
            std::fprintf(stderr, "hetpu: %s: another rank could not start the job (its message says why)\n", label);
        return worst;
    }
    std::vector<int> ids;
    for (const PlannerWorker &w : local)
        ids.push_back(w.id);
    run.dispatcher = std::make_unique<BlockDispatcher>(rules, *run.planner, ids, share);

    Node node(job, placement, run, comm, share, ids);
    if (rank == 0) {
        NodeNetwork network;
        network.bytes_per_element = static_cast<double>(placement.bytes_per_element);
        network.min_gain_s = 2 * kLongestReportPeriod;
        for (int r = 0; r < size; ++r)
            nodes[static_cast<size_t>(r)].remaining = shares[static_cast<size_t>(r)].count;
        node.make_coordinator(nodes, network);
    }
    MPI_Barrier(comm);  // every rank starts together: the makespan is the job's
    const double t0 = start_run(run);
    const int status = node.loop();
    const double makespan_s = (starpu_timing_now() - t0) * 1e-6;
    if (status == 0 && job.name && node.busy_s() > 0)
        save_node_rate(rate_key, static_cast<double>(run.elements_done) / node.busy_s());

    // 4. The report: every rank's workers and figures, on rank 0.
    std::vector<ClusterPu> mine_pus;
    for (const PlannerWorker &w : local)
        mine_pus.push_back({rank, w.id, w.kind, w.name, hetpu_host_name()});
    std::vector<WorkerTotals> mine_totals;
    for (const PlannerWorker &w : local)
        mine_totals.push_back(run.totals[static_cast<size_t>(w.id)]);
    std::vector<ClusterPu> pus;
    std::vector<WorkerTotals> totals;
    gather_workers(comm, mine_pus, mine_totals, pus, totals);
    if (report) {
        fill_report_header(*report, run, makespan_s, fixed_block, size);
        std::snprintf(report->mpi_planner, sizeof report->mpi_planner, "per-node");
        report->share_offset = share.offset;
        report->share_count = share.count;
        report->moves = node.moves();
        report->coordinator_s = node.coordinator_s() + shares_s;
        if (rank == 0) {
            report->elements = 0;
            report->blocks = 0;
            for (size_t g = 0; g < pus.size(); ++g) {
                report->elements += totals[g].elements;
                report->blocks += totals[g].blocks;
            }
            add_worker_reports(*report, pus, totals);
        }
    }
    gather_rank_reports(comm, share.offset, share.count, run.elements_done, node.traffic(), report);
    if (status != 0 || run.error != 0)
        return status != 0 ? status : run.error;
    unsigned long long mine_done = run.elements_done, all_done = 0;
    MPI_Allreduce(&mine_done, &all_done, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    if (all_done != rules.total) {
        if (rank == 0)
            std::fprintf(stderr, "hetpu: %s: internal error: %llu of %llu elements processed\n", label, all_done,
                         (unsigned long long)rules.total);
        return -EIO;
    }
    return 0;
}

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
