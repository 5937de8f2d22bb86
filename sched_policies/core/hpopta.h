// HPOPTA: the time-optimal workload distribution (the single-objective building block that
// seed 001 takes from its reference [32] and uses to seed HEPOPTA's energy threshold).
#pragma once

#include "sched_policies/core/pareto_profiles.h"

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
// Method: the optimal makespan is one of the profile times, so binary-search the sorted
// distinct times T for the smallest one at which n is reachable using only points with
// t <= T (reachability is a subset-sum over processors, done on bitsets); then one
// dynamic programme over (processor prefix, partial sum) picks the cheapest distribution
// within that makespan. O(p m n / 64 log(pm) + p m n) time, O(p n) memory.
Distribution hpopta(const std::vector<ProcessorProfile> &profiles, Granules n);

}  // namespace hetpu
