// SPDX-License-Identifier: LGPL-2.1-or-later
// How often the ranks of a per-node multi-rank run report to the coordinator (rank 0), how
// often the coordinator plans, and what that costs rank 0: one rule for the real runner
// (runtime/mpi/owned_rank.cpp, owned_coordinator.cpp) and the cluster simulator, which
// charges rank 0 the modelled cost of every report it handles and every round it plans
// (bench/coordinator_cost measures the real cost against the model). Pure C++.
#pragma once

#include <cstddef>

namespace hetpu {

// Progress reports rank 0 hears per second at most, whatever the number of ranks: at the
// modelled cost of a report that is under 1% of rank 0's time for the handling.
constexpr double kMaxReportsPerSecond = 2000;

// A rank's report period `elapsed_s` into the job: 2% of the time run so far (a short job
// re-shares within milliseconds, a long one needs no more), between 5 and 50 ms, and long
// enough that `ranks` ranks together stay under kMaxReportsPerSecond.
double report_period(double elapsed_s, int ranks);

// The coordinator plans at most once per this interval (a quarter of the report period),
// at once when a rank runs dry.
double round_interval(double elapsed_s, int ranks);

// Modelled seconds on rank 0 for receiving and handling one report (MPI_Iprobe, MPI_Recv of
// a small message, updating the node's figures).
constexpr double kReportHandlingS = 2e-6;

// Modelled seconds on rank 0 for one planning round over `nodes` nodes (sorting them by
// predicted finish, pairing late with early finishers).
double round_cost_s(size_t nodes);

}  // namespace hetpu
