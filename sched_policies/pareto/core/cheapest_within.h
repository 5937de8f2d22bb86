// SPDX-License-Identifier: LGPL-2.1-or-later
// The least-energy distribution under a makespan cap: the shared last step of HPOPTA
// (cap = optimal makespan) and of the minimum-energy distribution (cap = the least
// makespan any minimum-energy distribution has). Internal to the Pareto cores.
#pragma once

#include "sched_policies/pareto/core/profile_table.h"

#include <cstdint>
#include <vector>

namespace hetpu {
namespace detail {

// Sizes of a distribution of the table's workload using only points with time <= time_cap
// that has the least dynamic energy, then the fewest active processors; empty if none
// exists. Exact for both keys because the cap makes time a constraint, not an objective:
// energy and active count are both sums, so the best prefix is best for every completion
// (keeping a (time, energy, count) lexicographic best per prefix would not be: a slower
// prefix with fewer active processors can win once a later processor sets the makespan).
// Energies are summed in processor order, as evaluate_distribution() does, so ties are
// decided on the numbers that are reported.
//
// Only partial sums that can still become n are kept: after processors 0..i that is
// [n - (largest sizes of i+1..p-1 within the cap), largest sizes of 0..i], a narrow band
// when the cap is HPOPTA's tight makespan. O(p m W) time and O(p W) memory for a band of
// width W <= n + 1.
std::vector<Granules> cheapest_within(const ProfileTable &tab, double time_cap);

// Its arrays, kept by ParetoWorkspace so that repeated calls reuse them.
struct CheapestScratch {
    std::vector<double> e, e_next;
    std::vector<int> k, k_next;
    std::vector<std::int32_t> choice;  // per (processor, partial sum in its band)
    std::size_t capacity_bytes() const
    {
        return (e.capacity() + e_next.capacity()) * sizeof(double) + (k.capacity() + k_next.capacity()) * sizeof(int) +
               choice.capacity() * sizeof(std::int32_t);
    }
};
std::vector<Granules> cheapest_within(const ProfileTable &tab, double time_cap, CheapestScratch &scratch);

}  // namespace detail
}  // namespace hetpu
