// SPDX-License-Identifier: LGPL-2.1-or-later
// The exact Pareto cores as they were before the flat-layout rewrite, kept only so that
// bench/pareto_speed measures its speed-up against them in the same run (see the .cpp).
#pragma once

#include "sched_policies/pareto/core/pareto_profiles.h"

#include <cstdint>
#include <vector>

namespace hetpu_legacy {

struct ParetoStats {
    double t_opt_s = 0;
    double eps_j = 0;
    std::int64_t cells_built = 0;
    std::int64_t memo_hits = 0;
    std::int64_t cuts = 0;
    std::int64_t candidates = 0;
};

hetpu::Distribution hpopta(const std::vector<hetpu::ProcessorProfile> &profiles, hetpu::Granules n);
hetpu::Distribution min_energy_distribution(const std::vector<hetpu::ProcessorProfile> &profiles, hetpu::Granules n);
std::vector<hetpu::Distribution> hepopta(const std::vector<hetpu::ProcessorProfile> &profiles, hetpu::Granules n,
                                         ParetoStats *stats = nullptr);
std::vector<hetpu::Distribution> htpopta(const std::vector<hetpu::ProcessorProfile> &profiles, hetpu::Granules n,
                                         double base_power_w, ParetoStats *stats = nullptr);

}  // namespace hetpu_legacy
