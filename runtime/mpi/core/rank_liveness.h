// SPDX-License-Identifier: LGPL-2.1-or-later
// Liveness of the ranks of a multi-rank run: who has shown no progress for longer than the
// limit. A rank is alive while it says so (a heartbeat every sixth of the limit) and,
// while it has work running, while its count of finished elements grows. A rank that
// stops sending (stopped, swapped out, its node gone) or that keeps sending while its work
// stands still (a codelet that hangs) is overdue once the limit passes; one that comes
// back within the limit continues as if nothing happened. Pure C++: the MPI glue
// (runtime/mpi/rank_watch.h) sends and receives the heartbeats and ends the job.
#pragma once

#include <cstdint>
#include <vector>

namespace hetpu {

// The default limit: ten times the longest block any rank has run, at least a minute, so
// that no healthy run is ever ended by it.
constexpr double kLivenessFloorS = 60;
constexpr double kLivenessBlockFactor = 10;

// The limit in seconds: `configured_s` when positive (HETPU_MPI_LIVENESS_S), else the default
// from the longest block seen so far.
double liveness_limit(double configured_s, double longest_block_s);

// How often a rank sends its heartbeat under `limit_s`: six per limit, so that a stopped
// rank is noticed within 7/6 of the limit and a late heartbeat or two never counts.
double heartbeat_period(double limit_s);

// A heartbeat (control message, bytes on hetpu's control communicator).
struct WireAlive {
    uint64_t done;           // elements the rank has finished
    double longest_block_s;  // its longest block so far (execution + transfer)
    double limit_s;          // the limit the sender applies (rank 0's is the job's)
    int32_t working;         // it has elements running or queued: `done` must grow
    int32_t last;            // its last heartbeat of the run: stop watching it
};

// Rank 0 -> every rank when it ends the job: who and why.
struct WireLivenessEnd {
    int32_t rank;
    int32_t reporting;  // 1: it sent heartbeats but finished nothing; 0: it sent nothing
    double silent_s;
    double limit_s;
};

struct Overdue {
    int rank = -1;           // -1: every watched rank is alive
    bool reporting = false;  // it still sends heartbeats; its work stands still
    double silent_s = 0;     // seconds since it was last heard (silent) or last progressed (stuck)
};

class RankLiveness {
public:
    // Watches `watched` (rank 0 watches every other rank, the others watch rank 0) from
    // `now_s`, when every one of them counts as heard. `configured_s` <= 0: the default limit.
    RankLiveness(std::vector<int> watched, double configured_s, double now_s);

    // The run starts at `now_s`: every watched rank counts as heard, this rank as present.
    void begin(double now_s);
    // A heartbeat of `rank` at `now_s`.
    void heard(int rank, double now_s, const WireAlive &alive);
    // This rank's own block of `seconds` (the default limit follows the longest block).
    void block_seen(double seconds);

    double limit_s() const;
    double longest_block_s() const { return longest_block_s_; }
    // Whether this rank's heartbeat is due at `now_s`; if so, counts it as sent.
    bool heartbeat_due(double now_s);
    // Whether every watched rank has sent its last heartbeat.
    bool all_finished() const;
    // The watched rank overdue at `now_s`: silent (nothing heard for longer than the limit)
    // or stuck (heard within two heartbeats, no progress for longer than the limit). A silent
    // rank comes before a stuck one (waiting for the silent one may be all that holds it
    // up), and among them the longest overdue.
    Overdue overdue(double now_s) const;
    // This rank's own turn at `now_s`: the seconds since its previous turn when they exceed
    // the limit (it was stopped or starved itself, and the others have given up on it),
    // else 0.
    double self_away_s(double now_s);
    // The longest gap between two progresses of `rank` so far (for the record).
    double longest_gap_s(int rank) const;

private:
    struct Watched {
        int rank;
        double heard_s;     // last heartbeat
        double progress_s;  // last heartbeat that showed progress (or said it had no work)
        uint64_t done = 0;
        double longest_gap_s = 0;
        bool finished = false;
    };
    Watched *find(int rank);
    const Watched *find(int rank) const;

    std::vector<Watched> watched_;
    double configured_s_;
    double longest_block_s_ = 0;
    double announced_limit_s_ = 0;  // the largest limit a watched rank applies
    double next_beat_s_;
    double last_turn_s_;
};

}  // namespace hetpu
