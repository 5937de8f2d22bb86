// Dense O(1) lookup of the profiles, restricted to sizes 0..n (the paper's ReadFunc).
// Internal to the Pareto cores: HPOPTA and HEPOPTA index it by (processor, size) in their
// inner loops, where scanning the point lists would cost a factor m.
#pragma once

#include "sched_policies/core/pareto_profiles.h"

#include <vector>

namespace hetpu {
namespace detail {

class ProfileTable {
public:
    // Assumes validate_profiles() passed. Points with size > n can never be used for a
    // workload n and are left out.
    ProfileTable(const std::vector<ProcessorProfile> &profiles, Granules n);

    int procs() const { return static_cast<int>(sizes_.size()); }
    Granules workload() const { return n_; }

    // Sizes usable by processor i (idle 0 excluded), ascending.
    const std::vector<Granules> &sizes(int i) const { return sizes_[i]; }

    bool has(int i, Granules x) const { return x == 0 || time_[i][x] > 0.0; }
    double time(int i, Granules x) const { return time_[i][x]; }      // 0 for idle
    double energy(int i, Granules x) const { return energy_[i][x]; }  // 0 for idle

private:
    Granules n_;
    std::vector<std::vector<Granules>> sizes_;
    // time_[i][x] > 0 marks a point: validation guarantees time > 0 for every listed size.
    std::vector<std::vector<double>> time_;
    std::vector<std::vector<double>> energy_;
};

}  // namespace detail
}  // namespace hetpu
