// SPDX-License-Identifier: LGPL-2.1-or-later
// The paper's "Optimum" line: the best static distribution, one block per unit (possibly
// empty), with no overheads, noise or slowdown. Exact at granule resolution.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/sim/simulated_unit.h"

namespace hetpu::sim {

struct StaticDistribution {
    std::vector<uint64_t> blocks;  // per unit, elements
    double makespan_s = 0;
};

// Time of a unit is non-decreasing in its block size (scenario validation guarantees it),
// so for a candidate makespan T every unit can take any block up to its largest feasible
// one, and the smallest T whose feasible blocks cover the workload is optimal. Candidate
// makespans are the unit times at granule multiples: a binary search over them is exact.
// That search holds every candidate in memory: units x (workload / granule) of them, two
// per granule step with a remainder. Past this bound (2^24 candidates, 128 MiB) it bisects
// on the makespan instead (feasibility is monotone in it), in bounded memory.
constexpr uint64_t kMaxOptimumCandidates = uint64_t(1) << 24;
bool optimum_needs_bisection(size_t units, uint64_t workload, uint64_t granule);

// Throws std::invalid_argument saying why optimum_distribution cannot handle the job.
void check_optimum_job(size_t units, uint64_t workload, uint64_t granule);

// Calls check_optimum_job first.
StaticDistribution optimum_distribution(const std::vector<SimulatedUnit> &units, uint64_t workload, uint64_t granule);

}  // namespace hetpu::sim
