// SPDX-License-Identifier: LGPL-2.1-or-later
// When a rank of a per-node multi-rank run tells the coordinator how it progresses, and
// what it says about its speed and the work it has running. Pure C++: the MPI glue
// (runtime/mpi/owned_node.cpp) fills the figures and sends what this core lets through.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/mpi/core/owned_messages.h"

namespace hetpu {

// What the rank's workers sustain now: their speeds on their last blocks, summed, once
// every worker has run a block (a partial sum makes the rank look slower), else 0.
double node_rate(const std::vector<double> &last_rates);

class ProgressReports {
public:
    // `ranks`: the job's ranks, which set the report period (coordinator_cadence.h).
    explicit ProgressReports(int ranks = 1) : ranks_(ranks) {}

    // `r` holds the rank's figures (done, remaining, rate, idle, error; rank, move and
    // moved for the message) and `handed` the elements the rank took on. Fills in what is
    // derived from them (in_flight, event, elapsed_s) and says whether `r` goes out now: a
    // forced report or one of a move's events always, a progress report only on a change
    // and not more often than its period, report_period() (at once when the rank turns
    // idle or fails).
    bool due(WireReport &r, ReportEvent event, bool force, uint64_t handed, double elapsed_s);

    // Seconds from the start until the rank last ran out of work.
    double busy_s() const { return busy_s_; }

private:
    int ranks_;
    WireReport last_{};
    double busy_s_ = 0;
};

}  // namespace hetpu
