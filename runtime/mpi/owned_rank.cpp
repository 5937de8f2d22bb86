// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/owned_rank.h"

#ifdef HETPU_HAVE_MPI

#include <starpu.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <string>

namespace hetpu {
namespace {

constexpr auto kPollPeriod = std::chrono::microseconds(300);

}  // namespace

int PerNodeRank::loop()
{
    t0_us_ = rank_.run.t0_us;
    report(kProgress, 0, 0, true);
    for (;;) {
        bool progressed = receive_messages();
        progressed |= lender_.settle_returns();
        progressed |= borrower_.settle_arrivals([this](uint64_t move) { report(kArrived, move, 0, true); });
        progressed |= borrower_.return_finished_ranges();
        if (coordinator_)
            progressed |= coordinator_->coordinate();
        if (!rank_.stopped)
            report(kProgress, 0, 0, false);
        tick_watch();
        if (rank_.stopped && settled())
            return rank_.stop_status;
        if (!progressed) {
            std::unique_lock<std::mutex> lock(rank_.run.mutex);
            rank_.run.changed.wait_for(lock, kPollPeriod);
        }
    }
}

bool PerNodeRank::receive_messages()
{
    bool any = false;
    std::vector<std::pair<int, std::string>> local;
    local.swap(rank_.to_self);
    for (auto &[tag, bytes] : local) {
        dispatch(tag, rank_.rank, bytes.data());
        any = true;
    }
    for (;;) {
        int flag = 0;
        MPI_Status status;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, rank_.comm, &flag, &status);
        if (!flag)
            return any;
        int bytes = 0;
        MPI_Get_count(&status, MPI_BYTE, &bytes);
        std::vector<char> buf(static_cast<size_t>(bytes));
        MPI_Recv(buf.data(), bytes, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, rank_.comm, MPI_STATUS_IGNORE);
        rank_.traffic.control_received += static_cast<uint64_t>(bytes);
        dispatch(status.MPI_TAG, status.MPI_SOURCE, buf.data());
        any = true;
    }
}

void PerNodeRank::dispatch(int tag, int source, const char *bytes)
{
    switch (tag) {
    case kTagReport: {
        WireReport r;
        std::memcpy(&r, bytes, sizeof r);
        if (coordinator_)
            coordinator_->heard(r);
        break;
    }
    case kTagGive: {
        WireGive g;
        std::memcpy(&g, bytes, sizeof g);
        const uint64_t moved = lender_.give(g);
        report(kGave, g.move, moved, true);
        break;
    }
    case kTagTake: {
        WireTake t;
        std::memcpy(&t, bytes, sizeof t);
        borrower_.take(t, source);
        break;
    }
    case kTagStop: {
        int32_t status;
        std::memcpy(&status, bytes, sizeof status);
        rank_.stopped = true;
        rank_.stop_status = status;
        if (status != 0) {
            std::lock_guard<std::mutex> lock(rank_.run.mutex);
            rank_.run.dispatcher->stop();
        }
        break;
    }
    default:
        if (watch_)
            watch_->handle(tag, source, bytes);
        break;
    }
}

// Its heartbeat: its count of finished elements must grow while it has work of its own
// (rank 0's says only that it is there).
void PerNodeRank::tick_watch()
{
    if (!watch_)
        return;
    uint64_t done = 0;
    bool working = false;
    double longest = 0;
    {
        std::lock_guard<std::mutex> lock(rank_.run.mutex);
        done = rank_.run.elements_done;
        working = rank_.rank != 0 && (rank_.run.dispatcher->remaining() > 0 || done < rank_.handed);
        longest = rank_.run.longest_block_s;
    }
    watch_->tick(done, working, longest);
}

void PerNodeRank::report(ReportEvent event, uint64_t move, uint64_t moved, bool force)
{
    WireReport r;
    std::memset(&r, 0, sizeof r);
    const double now = starpu_timing_now();
    {
        std::lock_guard<std::mutex> lock(rank_.run.mutex);
        r.done = rank_.run.elements_done;
        r.remaining = rank_.run.dispatcher->remaining();
        r.error = rank_.run.error;
        std::vector<double> last_rates;
        for (int w : workers_)
            last_rates.push_back(rank_.run.totals[static_cast<size_t>(w)].last_rate);
        r.rate = node_rate(last_rates);
    }
    const uint64_t running = rank_.handed - r.remaining - r.done;
    r.idle = settled_locally(r.remaining, running) ? 1 : 0;
    r.rank = rank_.rank;
    r.move = move;
    r.moved = moved;
    if (reports_.due(r, event, force, rank_.handed, (now - t0_us_) * 1e-6))
        rank_.send(r, 0, kTagReport);
}

bool PerNodeRank::settled_locally(uint64_t remaining, uint64_t in_flight)
{
    std::lock_guard<std::mutex> lock(rank_.run.mutex);
    return remaining == 0 && in_flight == 0 && rank_.run.busy_callbacks == 0 && rank_.run.tasks.awaited() == 0 &&
           borrower_.none_held();
}

// After stop: every local block done, every borrowed range returned, every lent one home.
bool PerNodeRank::settled()
{
    std::lock_guard<std::mutex> lock(rank_.run.mutex);
    return run_settled(rank_.run) && borrower_.none_held() && lender_.none_out();
}

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
