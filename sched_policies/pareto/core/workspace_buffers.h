// SPDX-License-Identifier: LGPL-2.1-or-later
// What a ParetoWorkspace holds: the arrays of each step of HPOPTA and HEPOPTA, kept
// between calls for their capacity. Internal to the Pareto cores; every step resets the
// contents it reads, so nothing carries over from one call to the next but capacity.
#pragma once

#include "sched_policies/pareto/core/cheapest_within.h"
#include "sched_policies/pareto/core/pareto_profiles.h"
#include "sched_policies/pareto/core/profile_table.h"
#include "sched_policies/pareto/core/suffix_bounds.h"

#include <cstdint>
#include <vector>

namespace hetpu {
namespace detail {

template <typename T> std::size_t vector_bytes(const std::vector<T> &v) { return v.capacity() * sizeof(T); }

// HPOPTA (fastest_sizes).
struct FastestScratch {
    std::vector<double> times;
    std::vector<std::uint64_t> reach, next;
    std::vector<Granules> big;
    CheapestScratch cheapest;
    std::size_t capacity_bytes() const
    {
        return vector_bytes(times) + vector_bytes(reach) + vector_bytes(next) + vector_bytes(big) +
               cheapest.capacity_bytes();
    }
};

// min_energy_makespan's rows.
struct MinEnergyScratch {
    std::vector<double> e, t, e_next, t_next;
    std::size_t capacity_bytes() const
    {
        return vector_bytes(e) + vector_bytes(t) + vector_bytes(e_next) + vector_bytes(t_next);
    }
};

// HEPOPTA's table (hepopta.cpp explains the fields).
struct KernelEntry {
    double e;             // dynamic energy on processors 0..c-1, summed in that order
    std::int32_t r;       // time rank of their makespan, clamped
    std::int32_t part;    // size given to processor c-1
    std::int32_t parent;  // index of the partial solution in cell (c-1, s-part)
    std::int32_t k;       // active processors among 0..c-1
};

// Where a cell's entries are in the arena, and the least energy among them (+infinity
// when empty).
struct KernelCell {
    std::uint32_t off;
    std::uint32_t len;
    double min_e;
};

// A usable profile point of one processor (idle included).
struct KernelPoint {
    std::int32_t x;
    std::int32_t r;  // time rank
    double e;
};

struct KernelScratch {
    std::vector<double> times;
    std::vector<std::vector<KernelPoint>> points;
    std::vector<Granules> lo, hi;
    std::vector<std::size_t> cell_base;
    std::vector<KernelCell> cells;
    std::vector<KernelEntry> arena, stage, best;
    std::vector<std::uint64_t> touched;
    std::vector<double> cap;
    std::size_t capacity_bytes() const
    {
        std::size_t bytes = vector_bytes(times) + vector_bytes(lo) + vector_bytes(hi) + vector_bytes(cell_base) +
                            vector_bytes(cells) + vector_bytes(arena) + vector_bytes(stage) + vector_bytes(best) +
                            vector_bytes(touched) + vector_bytes(cap);
        for (const std::vector<KernelPoint> &p : points)
            bytes += vector_bytes(p);
        return bytes;
    }
};

struct WorkspaceBuffers {
    ProfileTable table;
    FastestScratch fastest;
    MinEnergyScratch min_energy;
    SuffixBounds bounds;
    KernelScratch kernel;
};

}  // namespace detail
}  // namespace hetpu
