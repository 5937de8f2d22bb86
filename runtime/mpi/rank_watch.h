// SPDX-License-Identifier: LGPL-2.1-or-later
// Liveness of a multi-rank run (both runners, runtime/mpi/mpi_run.cpp and mpi_owned_run.cpp):
// every rank sends rank 0 a heartbeat with its progress and rank 0 sends every rank one;
// a rank with no progress for longer than the limit (HETPU_MPI_LIVENESS_S, else ten times
// the longest block, at least a minute) ends the job on every rank, rank 0 naming the rank
// and its host. A rank stopped for less than the limit continues. The bookkeeping is the
// pure core's (runtime/mpi/core/rank_liveness.h); this glue sends, receives and ends the job.
#pragma once

#include "config.h"  // HETPU_HAVE_MPI

#ifdef HETPU_HAVE_MPI

#include <mpi.h>

#include <string>
#include <vector>

#include "runtime/mpi/core/rank_liveness.h"
#include "runtime/mpi/mpi_rank_report.h"

namespace hetpu {

// Control tags of the watch, apart from both runners' own.
constexpr int kTagAlive = 21;        // WireAlive, rank 0 <-> every rank
constexpr int kTagLivenessEnd = 22;  // WireLivenessEnd, rank 0 -> every rank, and its answer

// The configured limit (HETPU_MPI_LIVENESS_S), 0 when unset: the default applies.
double configured_liveness_s();

class RankWatch {
public:
    // Collective on `comm`: every rank's host name, for the message. `traffic` counts the
    // heartbeats as control bytes.
    RankWatch(MPI_Comm comm, const char *label, RankTraffic &traffic);

    // The run has started here (its first blocks submitted): the watch starts too.
    void begin() { core_.begin(now_s()); }
    // The main thread's turn: this rank's heartbeat when due (`done` elements finished,
    // `working`: some running or queued here, `longest_block_s`: its longest block), and the
    // end of the job when a watched rank is overdue (never returns then).
    void tick(uint64_t done, bool working, double longest_block_s);
    // Handles a message of the watch's tags (false: another tag).
    bool handle(int tag, int source, const char *bytes);
    // Receives the watch's pending messages, for loops that probe only their own tags.
    bool receive();
    // At the run's end, on every rank: a last heartbeat to every watched rank, then every
    // watched rank's last one received (watching while waiting), so none is left unreceived.
    void finish(uint64_t done, double longest_block_s);
    // The longest time a rank went without progress, as rank 0 saw it (0 elsewhere).
    double longest_gap_s(int rank) const { return core_.longest_gap_s(rank); }

private:
    void send_alive(uint64_t done, bool working, double longest_block_s, bool last);
    [[noreturn]] void end_job(const Overdue &o);
    [[noreturn]] void ended_by_rank0(const WireLivenessEnd &e);
    [[noreturn]] void given_up(double away_s);
    double now_s() const;

    MPI_Comm comm_;
    std::string label_;
    RankTraffic &traffic_;
    int rank_ = 0, size_ = 1;
    std::vector<std::string> hosts_;
    RankLiveness core_;
};

// Rank 0, after gather_rank_reports(): each rank's longest silence into its rank report.
void add_silences(const RankWatch &watch, hetpu_divisible_report *report);

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
