// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/profile_table.h"

#include <algorithm>

namespace hetpu {
namespace detail {

ProfileTable::ProfileTable(const std::vector<ProcessorProfile> &profiles, Granules n) { assign(profiles, n); }

void ProfileTable::assign(const std::vector<ProcessorProfile> &profiles, Granules n)
{
    n_ = n;
    sizes_.resize(profiles.size());
    for (std::vector<Granules> &s : sizes_)
        s.clear();
    time_.assign(profiles.size() * static_cast<std::size_t>(n + 1), 0.0);
    energy_.assign(profiles.size() * static_cast<std::size_t>(n + 1), 0.0);
    for (std::size_t i = 0; i < profiles.size(); ++i) {
        sizes_[i].reserve(profiles[i].points.size());
        for (const ProfilePoint &pt : profiles[i].points) {
            if (pt.size <= 0 || pt.size > n)
                continue;  // idle point is implicit; oversized points are unusable
            time_[at(static_cast<int>(i), pt.size)] = pt.time_s;
            energy_[at(static_cast<int>(i), pt.size)] = pt.energy_j;
            sizes_[i].push_back(pt.size);
        }
        std::sort(sizes_[i].begin(), sizes_[i].end());
    }
}

std::size_t ProfileTable::capacity_bytes() const
{
    std::size_t bytes = (time_.capacity() + energy_.capacity()) * sizeof(double);
    for (const std::vector<Granules> &s : sizes_)
        bytes += s.capacity() * sizeof(Granules);
    return bytes;
}

}  // namespace detail
}  // namespace hetpu
