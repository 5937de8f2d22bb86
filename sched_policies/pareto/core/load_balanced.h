// SPDX-License-Identifier: LGPL-2.1-or-later
// The load-balanced workload distribution that the HEPOPTA paper compares its Pareto fronts with:
// "one with the minimum difference between the execution times of processors. The number of
// active processors in load-balanced solutions may be less than the total number of
// processors." Pure C++, no StarPU.
#pragma once

#include "sched_policies/pareto/core/pareto_profiles.h"

#include <vector>

namespace hetpu {

struct LoadBalanced {
    Distribution distribution;
    double spread_s = 0;  // max - min execution time over the active processors
};

// Among distributions of n granules (one profile size or idle per processor), the one a
// load balancer aims at: as many active processors as possible (a balancer gives every
// processor work unless no such distribution exists; one active processor would be
// trivially "balanced"), then the least spread max_i t_i - min_i t_i over the active ones,
// then the least makespan (and, inside the chosen window of times, the least dynamic
// energy). Figures are
// evaluate_distribution(..., base_power_w) of the returned sizes.
//
// Method: for a set S of active processors the best windows [L, U] of allowed times are
// found with two pointers over the sorted profile times (for a larger L the smallest
// feasible U never decreases), each test a subset-sum over S on bitsets; sets are tried by
// decreasing size. Throws InvalidProfileError on bad input (or when more than 16
// processors would need the subset search), UnreachableWorkloadError if n cannot be formed.
LoadBalanced load_balanced_distribution(const std::vector<ProcessorProfile> &profiles, Granules n,
                                        double base_power_w = 0.0);

}  // namespace hetpu
