// SPDX-License-Identifier: LGPL-2.1-or-later
// HEPOPTA and HTPOPTA: every globally Pareto-optimal workload distribution for
// (execution time, dynamic energy) and for (execution time, total energy) from discrete,
// arbitrarily shaped per-processor profiles.
#pragma once

#include "sched_policies/pareto/core/pareto_profiles.h"
#include "sched_policies/pareto/core/pareto_workspace.h"

#include <cstdint>
#include <vector>

namespace hetpu {

// Optional counters describing how much work the search did.
struct ParetoStats {
    double t_opt_s = 0;            // HPOPTA's optimal makespan
    double eps_j = 0;              // energy threshold: dynamic energy of HPOPTA's solution
    std::int64_t cells_built = 0;  // table cells (processor prefix, partial sum) merged
    std::int64_t memo_hits = 0;    // unused since the table form (every cell is built once)
    std::int64_t cuts = 0;         // (cell, point) pairs pruned whole by the energy bound
    std::int64_t candidates = 0;   // merged partial solutions examined
    std::int64_t table_bytes = 0;  // memory held by the table's partial solutions
};

// All Pareto-optimal (time, dynamic energy) points for workload n, one distribution each,
// sorted by increasing dynamic energy (so strictly decreasing time). The last point has the
// optimal makespan (with the least energy for it), the first the minimum dynamic energy
// (with the least time for it). Where several distributions share a front
// point, the one with the fewest active processors is returned. Every reported figure is
// evaluate_distribution() of the reported sizes; total_energy_j == dynamic_energy_j.
//
// Throws InvalidProfileError on bad input, UnreachableWorkloadError if n cannot be formed.
std::vector<Distribution> hepopta(const std::vector<ProcessorProfile> &profiles, Granules n,
                                  ParetoStats *stats = nullptr);
// The same, reusing (and growing) the caller's workspace (pareto_workspace.h): what a
// caller computing many fronts should use.
std::vector<Distribution> hepopta(const std::vector<ProcessorProfile> &profiles, Granules n, ParetoWorkspace &workspace,
                                  ParetoStats *stats = nullptr);

// The same for (time, total energy = dynamic + base_power_w * time), sorted by increasing
// total energy. As the paper proves, this front is a subset of HEPOPTA's (a point dominated
// in time and dynamic energy is dominated in time and total energy too), so it is HEPOPTA's
// front re-filtered.
std::vector<Distribution> htpopta(const std::vector<ProcessorProfile> &profiles, Granules n, double base_power_w,
                                  ParetoStats *stats = nullptr);
std::vector<Distribution> htpopta(const std::vector<ProcessorProfile> &profiles, Granules n, double base_power_w,
                                  ParetoWorkspace &workspace, ParetoStats *stats = nullptr);

// HTPOPTA's front from an already computed HEPOPTA front (the re-filter above), so that a
// caller wanting both, or the total front for several base powers, searches only once.
std::vector<Distribution> total_front(std::vector<Distribution> dynamic_front, double base_power_w);

}  // namespace hetpu
