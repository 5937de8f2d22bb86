// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/rank_watch.h"

#ifdef HETPU_HAVE_MPI

#include <hetpu/mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/settings.h"

namespace hetpu {
namespace {

double steady_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int comm_rank(MPI_Comm comm)
{
    int r = 0;
    MPI_Comm_rank(comm, &r);
    return r;
}

int comm_size(MPI_Comm comm)
{
    int n = 1;
    MPI_Comm_size(comm, &n);
    return n;
}

// Rank 0 watches every other rank; every other rank watches rank 0.
std::vector<int> watched_by(int rank, int size)
{
    std::vector<int> out;
    if (rank != 0)
        return {0};
    for (int r = 1; r < size; ++r)
        out.push_back(r);
    return out;
}

// How long the ranks told of the end wait for rank 0 to end the job before ending it
// themselves, and how long rank 0 waits for their answers: they only print a line.
constexpr double kEndGraceS = 5;

}  // namespace

double configured_liveness_s()
{
    try {
        return Settings().number("HETPU_MPI_LIVENESS_S").value_or(0);
    } catch (const SettingError &) {
        return 0;  // start-up has refused it already
    }
}

RankWatch::RankWatch(MPI_Comm comm, const char *label, RankTraffic &traffic)
    : comm_(comm), label_(label ? label : "divisible job"), traffic_(traffic), rank_(comm_rank(comm)),
      size_(comm_size(comm)), core_(watched_by(rank_, size_), configured_liveness_s(), steady_s())
{
    char mine[64] = {};
    std::snprintf(mine, sizeof mine, "%s", hetpu_host_name());
    std::vector<char> all(static_cast<size_t>(size_) * sizeof mine);
    MPI_Allgather(mine, sizeof mine, MPI_CHAR, all.data(), sizeof mine, MPI_CHAR, comm_);
    for (int r = 0; r < size_; ++r)
        hosts_.emplace_back(all.data() + static_cast<size_t>(r) * sizeof mine);
}

double RankWatch::now_s() const { return steady_s(); }

void RankWatch::send_alive(uint64_t done, bool working, double longest_block_s, bool last)
{
    WireAlive a{};
    a.done = done;
    a.working = working ? 1 : 0;
    a.last = last ? 1 : 0;
    a.longest_block_s = longest_block_s;
    a.limit_s = core_.limit_s();
    // Small messages go eagerly: a stopped receiver never blocks the sender.
    for (int r = 0; r < size_; ++r) {
        if (r == rank_ || (rank_ != 0 && r != 0))
            continue;
        traffic_.control_sent += sizeof a;
        MPI_Send(&a, sizeof a, MPI_BYTE, r, kTagAlive, comm_);
    }
}

void RankWatch::tick(uint64_t done, bool working, double longest_block_s)
{
    if (size_ < 2)
        return;
    // The watch's messages first: a rank back from a long stop learns it was given up on
    // before it judges the others by their (then old) heartbeats.
    receive();
    core_.block_seen(longest_block_s);
    const double now = now_s();
    if (const double away = core_.self_away_s(now); away > 0)
        given_up(away);
    if (core_.heartbeat_due(now))
        send_alive(done, working, core_.longest_block_s(), false);
    const Overdue o = core_.overdue(now);
    if (o.rank >= 0)
        end_job(o);
}

void RankWatch::given_up(double away_s)
{
    std::fprintf(stderr,
                 "hetpu: %s: rank %d did not run for %.1f s (stopped or starved), beyond the liveness limit of %.1f "
                 "s: the other ranks have ended the job without it\n",
                 label_.c_str(), rank_, away_s, core_.limit_s());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
}

bool RankWatch::handle(int tag, int source, const char *bytes)
{
    if (tag == kTagAlive) {
        WireAlive a;
        std::memcpy(&a, bytes, sizeof a);
        core_.heard(source, now_s(), a);
        return true;
    }
    if (tag == kTagLivenessEnd) {
        WireLivenessEnd e;
        std::memcpy(&e, bytes, sizeof e);
        if (rank_ != 0)
            ended_by_rank0(e);
        return true;  // rank 0: an answer to its end, which it does not wait for here
    }
    return false;
}

bool RankWatch::receive()
{
    bool any = false;
    for (int tag : {kTagAlive, kTagLivenessEnd}) {
        for (;;) {
            int flag = 0;
            MPI_Status status;
            MPI_Iprobe(MPI_ANY_SOURCE, tag, comm_, &flag, &status);
            if (!flag)
                break;
            char buf[64];
            int bytes = 0;
            MPI_Get_count(&status, MPI_BYTE, &bytes);
            if (bytes < 0 || static_cast<size_t>(bytes) > sizeof buf)
                bytes = sizeof buf;  // cannot happen: every rank runs the same binary
            MPI_Recv(buf, bytes, MPI_BYTE, status.MPI_SOURCE, tag, comm_, MPI_STATUS_IGNORE);
            traffic_.control_received += static_cast<uint64_t>(bytes);
            handle(tag, status.MPI_SOURCE, buf);
            any = true;
        }
    }
    return any;
}

void RankWatch::finish(uint64_t done, double longest_block_s)
{
    if (size_ < 2)
        return;
    core_.block_seen(longest_block_s);
    send_alive(done, false, core_.longest_block_s(), true);
    while (!core_.all_finished()) {
        if (!receive())
            std::this_thread::sleep_for(std::chrono::microseconds(300));
        // Heartbeats go on: a rank still settling its run must not take this one for dead.
        const double now = now_s();
        if (const double away = core_.self_away_s(now); away > 0)
            given_up(away);
        if (core_.heartbeat_due(now))
            send_alive(done, false, core_.longest_block_s(), false);
        const Overdue o = core_.overdue(now);
        if (o.rank >= 0)
            end_job(o);
    }
}

void RankWatch::end_job(const Overdue &o)
{
    const double limit = core_.limit_s();
    const std::string host = static_cast<size_t>(o.rank) < hosts_.size() ? hosts_[o.rank] : "?";
    const bool configured = configured_liveness_s() > 0;
    const char *what = o.reporting ? "reported but finished nothing" : "sent no progress";
    const char *rule =
        configured ? "HETPU_MPI_LIVENESS_S" : "HETPU_MPI_LIVENESS_S unset: 10x the longest block, >= 60 s";
    std::fprintf(stderr,
                 "hetpu: %s: rank %d (host %s) %s for %.1f s, beyond the liveness limit of %.1f s (%s): the job "
                 "ends on every rank\n",
                 label_.c_str(), o.rank, host.c_str(), what, o.silent_s, limit, rule);
    std::fflush(stderr);
    if (rank_ == 0) {
        // Tell every other rank why, so each ends with a line of its own; then end the job
        // (MPI_Abort: the overdue rank cannot take part in an orderly end).
        WireLivenessEnd e{o.rank, o.reporting ? 1 : 0, o.silent_s, limit};
        int told = 0;
        // The overdue rank too: should it come back before the end reaches it, it says why.
        for (int r = 1; r < size_; ++r) {
            MPI_Request req;
            MPI_Isend(&e, sizeof e, MPI_BYTE, r, kTagLivenessEnd, comm_, &req);
            MPI_Request_free(&req);
            told += r == o.rank ? 0 : 1;
        }
        const double until = now_s() + kEndGraceS;
        while (told > 0 && now_s() < until) {
            int flag = 0;
            MPI_Status status;
            MPI_Iprobe(MPI_ANY_SOURCE, kTagLivenessEnd, comm_, &flag, &status);
            if (!flag) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                continue;
            }
            WireLivenessEnd answer;
            MPI_Recv(&answer, sizeof answer, MPI_BYTE, status.MPI_SOURCE, kTagLivenessEnd, comm_, MPI_STATUS_IGNORE);
            told -= status.MPI_SOURCE == o.rank ? 0 : 1;
        }
    }
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);  // MPI_Abort does not return; this says so to the compiler
}

void RankWatch::ended_by_rank0(const WireLivenessEnd &e)
{
    const std::string host = static_cast<size_t>(e.rank) < hosts_.size() ? hosts_[e.rank] : "?";
    std::fprintf(stderr,
                 "hetpu: %s: rank %d stops: rank 0 ended the job, rank %d (host %s) %s for %.1f s (liveness limit "
                 "%.1f s)\n",
                 label_.c_str(), rank_, e.rank, host.c_str(),
                 e.reporting ? "reported but finished nothing" : "sent no progress", e.silent_s, e.limit_s);
    std::fflush(stderr);
    MPI_Send(&e, sizeof e, MPI_BYTE, 0, kTagLivenessEnd, comm_);
    // Rank 0 ends the job now; should it not, this rank does.
    std::this_thread::sleep_for(std::chrono::duration<double>(kEndGraceS * 2));
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
}

void add_silences(const RankWatch &watch, hetpu_divisible_report *report)
{
    if (!report || hetpu_mpi_rank() != 0)
        return;
    for (unsigned i = 0; i < report->nrank_reports && i < HETPU_REPORT_MAX_RANKS; ++i)
        report->rank_reports[i].longest_silence_s = watch.longest_gap_s(report->rank_reports[i].rank);
}

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
