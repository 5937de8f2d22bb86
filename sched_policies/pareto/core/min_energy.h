// SPDX-License-Identifier: LGPL-2.1-or-later
// The minimum-dynamic-energy workload distribution: the other end of the HEPOPTA front
// from HPOPTA's time-optimal one.
#pragma once

#include "sched_policies/pareto/core/pareto_profiles.h"
#include "sched_policies/pareto/core/profile_table.h"

#include <vector>

namespace hetpu {

// Returns a distribution of n granules with the least dynamic energy; among those one with
// the least makespan, then the fewest active processors. HEPOPTA uses its makespan as a
// time threshold: a distribution slower than it is dominated by it, since nothing is
// cheaper. Two dynamic programmes over (processor prefix, partial sum), O(p m n) time,
// summing energies in processor order so that ties are those evaluate_distribution() sees.
// Throws InvalidProfileError on bad input, UnreachableWorkloadError if n cannot be formed.
Distribution min_energy_distribution(const std::vector<ProcessorProfile> &profiles, Granules n);

namespace detail {

// The least makespan of a minimum-energy distribution (the first programme above), using
// only points with energy <= max_energy (a bound the minimum is known to meet); -1 when n
// is unreachable.
double min_energy_makespan(const ProfileTable &tab, double max_energy);
struct MinEnergyScratch;
double min_energy_makespan(const ProfileTable &tab, double max_energy, MinEnergyScratch &scratch);

}  // namespace detail
}  // namespace hetpu
