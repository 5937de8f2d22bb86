// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/profile_table.h"

#include <algorithm>

namespace hetpu {
namespace detail {

ProfileTable::ProfileTable(const std::vector<ProcessorProfile> &profiles, Granules n) { assign(profiles, n); }

namespace {

// Ascending by size, no idle point: usable in place (cut at n).
bool usable_in_place(const std::vector<ProfilePoint> &points)
{
    for (std::size_t j = 0; j < points.size(); ++j)
        if (points[j].size <= 0 || (j > 0 && points[j].size <= points[j - 1].size))
            return false;
    return true;
}

}  // namespace

void ProfileTable::assign(const std::vector<ProcessorProfile> &profiles, Granules n)
{
    n_ = n;
    copies_.clear();
    // Copies first, ranges after: the copies' vector may move while it grows.
    std::vector<std::size_t> copy_begin(profiles.size() + 1, 0);
    std::vector<bool> in_place(profiles.size());
    for (std::size_t i = 0; i < profiles.size(); ++i) {
        copy_begin[i] = copies_.size();
        const std::vector<ProfilePoint> &points = profiles[i].points;
        in_place[i] = usable_in_place(points);
        if (in_place[i])
            continue;
        for (const ProfilePoint &pt : points)
            if (pt.size > 0 && pt.size <= n)  // idle point is implicit; oversized points are unusable
                copies_.push_back(pt);
        std::sort(copies_.begin() + static_cast<std::ptrdiff_t>(copy_begin[i]), copies_.end(),
                  [](const TablePoint &a, const TablePoint &b) { return a.size < b.size; });
    }
    copy_begin[profiles.size()] = copies_.size();
    ranges_.clear();
    for (std::size_t i = 0; i < profiles.size(); ++i) {
        const std::vector<ProfilePoint> &points = profiles[i].points;
        if (in_place[i]) {
            const ProfilePoint *first = points.data();
            const ProfilePoint *last = std::upper_bound(first, first + points.size(), n,
                                                        [](Granules v, const ProfilePoint &pt) { return v < pt.size; });
            ranges_.emplace_back(first, last);
        } else {
            ranges_.emplace_back(copies_.data() + copy_begin[i], copies_.data() + copy_begin[i + 1]);
        }
    }
}

std::size_t ProfileTable::capacity_bytes() const
{
    return ranges_.capacity() * sizeof(PointRange) + copies_.capacity() * sizeof(TablePoint);
}

}  // namespace detail
}  // namespace hetpu
