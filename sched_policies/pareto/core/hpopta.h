// SPDX-License-Identifier: LGPL-2.1-or-later
// HPOPTA: the time-optimal workload distribution (the single-objective building block that
// the HEPOPTA paper takes from its reference [32] and uses to seed HEPOPTA's energy threshold).
#pragma once

#include "sched_policies/pareto/core/pareto_profiles.h"
#include "sched_policies/pareto/core/pareto_workspace.h"
#include "sched_policies/pareto/core/profile_table.h"

#include <vector>

namespace hetpu {

// Returns a distribution of n granules minimising the makespan max_i t_i(x_i). Among all
// makespan-optimal distributions it returns one with the least dynamic energy, and among
// those one with the fewest active processors, so that HEPOPTA's threshold is as tight as
// possible (the paper notes any time-optimal distribution is correct, the cheapest prunes
// most). total_energy_j == dynamic_energy_j (no base power here).
//
// Throws InvalidProfileError on bad input, UnreachableWorkloadError if no combination of
// sizes sums to n.
//
// Method: the optimal makespan is one of the profile times. It is at least the first time
// T at which the largest sizes with t <= T add up to n (a counting bound); searching the
// sorted times upwards from that bound with galloping steps, each step asks whether n is
// reachable using only points with t <= T (a subset-sum over processors on bitsets, kept to
// the band of partial sums that can still become n, which is narrow near the bound). Then
// one dynamic programme over (processor prefix, partial sum) in the same band picks the
// cheapest distribution within the makespan found.
Distribution hpopta(const std::vector<ProcessorProfile> &profiles, Granules n);
// The same, reusing (and growing) the caller's workspace (pareto_workspace.h).
Distribution hpopta(const std::vector<ProcessorProfile> &profiles, Granules n, ParetoWorkspace &workspace);

namespace detail {

struct FastestScratch;

// HPOPTA's sizes on an already validated table; empty when n is unreachable. HEPOPTA calls
// it on the table it builds anyway.
std::vector<Granules> fastest_sizes(const ProfileTable &tab);
std::vector<Granules> fastest_sizes(const ProfileTable &tab, FastestScratch &scratch);

}  // namespace detail
}  // namespace hetpu
