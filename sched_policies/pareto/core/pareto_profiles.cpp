// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/pareto_profiles.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace hetpu {

namespace {

std::string proc_label(const std::vector<ProcessorProfile> &profiles, std::size_t i)
{
    std::ostringstream os;
    os << "processor " << i;
    if (!profiles[i].name.empty())
        os << " (" << profiles[i].name << ")";
    return os.str();
}

bool is_idle_point(const ProfilePoint &pt) { return pt.size == 0 && pt.time_s == 0.0 && pt.energy_j == 0.0; }

}  // namespace

void validate_profiles(const std::vector<ProcessorProfile> &profiles, Granules n)
{
    if (profiles.empty())
        throw InvalidProfileError("pareto: need at least one processor profile");
    if (n < 0)
        throw InvalidProfileError("pareto: workload n=" + std::to_string(n) + " is negative");
    if (n > kMaxParetoWorkload)
        throw InvalidProfileError("pareto: workload n=" + std::to_string(n) + " granules exceeds the limit " +
                                  std::to_string(kMaxParetoWorkload) + "; use a coarser granule");
    for (std::size_t i = 0; i < profiles.size(); ++i) {
        std::vector<Granules> sizes;
        sizes.reserve(profiles[i].points.size());
        for (const ProfilePoint &pt : profiles[i].points) {
            // The message is built only on failure: a stream per point cost more than the
            // whole time-optimal search on large profiles.
            auto fail = [&](const char *why) {
                std::ostringstream where;
                where << "pareto: " << proc_label(profiles, i) << ", point size=" << pt.size << ": " << why;
                throw InvalidProfileError(where.str());
            };
            if (is_idle_point(pt))
                continue;  // redundant but harmless: idle is implicit
            if (pt.size <= 0)
                fail("size must be > 0 (idle is implicit: size 0, time 0, energy 0)");
            if (!std::isfinite(pt.time_s) || pt.time_s <= 0.0)
                fail("time must be finite and > 0");
            if (!std::isfinite(pt.energy_j) || pt.energy_j < 0.0)
                fail("dynamic energy must be finite and >= 0");
            sizes.push_back(pt.size);
        }
        std::sort(sizes.begin(), sizes.end());
        auto dup = std::adjacent_find(sizes.begin(), sizes.end());
        if (dup != sizes.end())
            throw InvalidProfileError("pareto: " + proc_label(profiles, i) + ": size " + std::to_string(*dup) +
                                      " appears more than once");
    }
}

void validate_base_power(double base_power_w)
{
    if (!std::isfinite(base_power_w) || base_power_w < 0.0)
        throw InvalidProfileError("pareto: base power must be finite and >= 0 W");
}

Distribution evaluate_distribution(const std::vector<ProcessorProfile> &profiles, const std::vector<Granules> &sizes,
                                   double base_power_w)
{
    if (sizes.size() != profiles.size())
        throw InvalidProfileError("pareto: distribution has " + std::to_string(sizes.size()) + " entries for " +
                                  std::to_string(profiles.size()) + " processors");
    Distribution d;
    d.sizes = sizes;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] == 0)
            continue;  // idle: adds nothing; skipping keeps the sum identical to x+0.0
        auto it = std::find_if(profiles[i].points.begin(), profiles[i].points.end(),
                               [&](const ProfilePoint &pt) { return pt.size == sizes[i]; });
        if (it == profiles[i].points.end())
            throw InvalidProfileError("pareto: " + proc_label(profiles, i) + " has no point of size " +
                                      std::to_string(sizes[i]));
        d.time_s = std::max(d.time_s, it->time_s);
        d.dynamic_energy_j += it->energy_j;
        ++d.active;
    }
    d.total_energy_j = d.dynamic_energy_j + base_power_w * d.time_s;
    return d;
}

}  // namespace hetpu
