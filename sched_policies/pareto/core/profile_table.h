// SPDX-License-Identifier: LGPL-2.1-or-later
// Dense O(1) lookup of the profiles, restricted to sizes 0..n (the paper's ReadFunc).
// Internal to the Pareto cores: HPOPTA and HEPOPTA index it by (processor, size) in their
// inner loops, where scanning the point lists would cost a factor m. One flat array per
// figure rather than a vector per processor: building it is one allocation, and the
// lookups of neighbouring processors share cache lines' worth of prefetching.
#pragma once

#include "sched_policies/pareto/core/pareto_profiles.h"

#include <vector>

namespace hetpu {
namespace detail {

class ProfileTable {
public:
    // Assumes validate_profiles() passed. Points with size > n can never be used for a
    // workload n and are left out.
    ProfileTable(const std::vector<ProcessorProfile> &profiles, Granules n);
    ProfileTable() = default;  // empty until assign()

    // Rebuilds the table in place, reusing the arrays' capacity (ParetoWorkspace keeps one
    // table across calls so that a repeated call neither allocates nor faults pages in).
    // A compact O(p m) form with a binary search per lookup was measured 2-3x slower on
    // repeated HPOPTA calls (issue 51), so the dense form stays.
    void assign(const std::vector<ProcessorProfile> &profiles, Granules n);

    std::size_t capacity_bytes() const;

    int procs() const { return static_cast<int>(sizes_.size()); }
    Granules workload() const { return n_; }

    // Sizes usable by processor i (idle 0 excluded), ascending.
    const std::vector<Granules> &sizes(int i) const { return sizes_[i]; }

    bool has(int i, Granules x) const { return x == 0 || time_[at(i, x)] > 0.0; }
    double time(int i, Granules x) const { return time_[at(i, x)]; }      // 0 for idle
    double energy(int i, Granules x) const { return energy_[at(i, x)]; }  // 0 for idle

private:
    std::size_t at(int i, Granules x) const
    {
        return static_cast<std::size_t>(i) * static_cast<std::size_t>(n_ + 1) + static_cast<std::size_t>(x);
    }
    Granules n_ = 0;
    std::vector<std::vector<Granules>> sizes_;
    // time_[at(i, x)] > 0 marks a point: validation guarantees time > 0 for every listed size.
    std::vector<double> time_;
    std::vector<double> energy_;
};

}  // namespace detail
}  // namespace hetpu
