// SPDX-License-Identifier: LGPL-2.1-or-later
// The profiles restricted to sizes 1..n (the paper's ReadFunc), as a run of points per
// processor, ascending by size. Internal to the Pareto cores: every loop of HPOPTA and
// HEPOPTA walks a processor's points in size order and reads their time and energy, so
// nothing needs a lookup by size. Where the caller's points are already ascending without
// an idle point (profiles built by code usually are), the table points into them and copies
// nothing; the others are copied and sorted. A dense p x (n+1) table (the paper's form) was
// 8x larger at m = 500 sizes and n = 4,000 granules, and a process's first call paid to fault
// its pages in.
#pragma once

#include "sched_policies/pareto/core/pareto_profiles.h"

#include <cstddef>
#include <vector>

namespace hetpu {
namespace detail {

using TablePoint = ProfilePoint;  // size > 0 (idle is implicit), time > 0 (validated), energy

// A processor's points, in the ranged-for form `for (const auto &[x, t, e] : tab.points(i))`.
class PointRange {
public:
    PointRange(const TablePoint *first, const TablePoint *last) : first_(first), last_(last) {}
    const TablePoint *begin() const { return first_; }
    const TablePoint *end() const { return last_; }
    bool empty() const { return first_ == last_; }
    std::size_t size() const { return static_cast<std::size_t>(last_ - first_); }

private:
    const TablePoint *first_, *last_;
};

class ProfileTable {
public:
    // Assumes validate_profiles() passed. Points with size > n can never be used for a
    // workload n and are left out.
    ProfileTable(const std::vector<ProcessorProfile> &profiles, Granules n);
    ProfileTable() = default;  // empty until assign()

    // Rebuilds the table in place, reusing the arrays' capacity (ParetoWorkspace keeps one
    // table across calls so that a repeated call does not allocate). The table may point
    // into `profiles`: they must outlive its use, i.e. the call that assigned it.
    void assign(const std::vector<ProcessorProfile> &profiles, Granules n);

    std::size_t capacity_bytes() const;

    int procs() const { return static_cast<int>(ranges_.size()); }
    Granules workload() const { return n_; }

    // Usable points of processor i (idle excluded), ascending by size.
    PointRange points(int i) const { return ranges_[static_cast<std::size_t>(i)]; }
    // Processor i's largest usable size (0 when it has none).
    Granules largest(int i) const
    {
        const PointRange r = points(i);
        return r.empty() ? 0 : r.end()[-1].size;
    }

private:
    Granules n_ = 0;
    std::vector<PointRange> ranges_;  // processor i's points
    std::vector<TablePoint> copies_;  // the points of processors whose own were not usable as they are
};

}  // namespace detail
}  // namespace hetpu
