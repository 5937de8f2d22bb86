// SPDX-License-Identifier: LGPL-2.1-or-later
// Lower bounds for the processors *after* a cell of HEPOPTA's table.
//
// Cell (c, s) of the table holds the Pareto set of the ways to place s granules on
// processors 0..c-1, so whatever complete distribution passes through it places the other
// r = n - s granules on processors c..p-1. The cheapest and the fastest ways to do that
// bound every completion of the cell, which lets HEPOPTA apply its global energy threshold
// eps per cell (a partial solution of energy e is hopeless when e + min_energy(c, r) > eps)
// and ignore differences between partial times below min_time(c, r) (the rest is at least
// that slow, so such differences never reach the makespan). Internal to the Pareto cores.
#pragma once

#include "sched_policies/pareto/core/profile_table.h"

#include <vector>

namespace hetpu {
namespace detail {

class SuffixBounds {
public:
    // Processor sizes whose energy exceeds `max_energy` or whose time exceeds `max_time`
    // are left out, as HEPOPTA leaves them out of the table.
    SuffixBounds(const ProfileTable &tab, double max_energy, double max_time) { assign(tab, max_energy, max_time); }
    SuffixBounds() = default;  // empty until assign()

    // Recomputes the bounds in place, reusing the rows' capacity (see ParetoWorkspace).
    void assign(const ProfileTable &tab, double max_energy, double max_time);

    std::size_t capacity_bytes() const { return (energy_.capacity() + time_.capacity()) * sizeof(double); }

    // Least dynamic energy / least makespan placing exactly r granules on processors
    // c..p-1 (c = 0..p); +infinity when that is impossible.
    double min_energy(int c, Granules r) const { return energy_[idx(c, r)]; }
    double min_time(int c, Granules r) const { return time_[idx(c, r)]; }

private:
    std::size_t idx(int c, Granules r) const { return static_cast<std::size_t>(c) * (n_ + 1) + r; }
    Granules n_ = 0;
    std::vector<double> energy_, time_;
};

}  // namespace detail
}  // namespace hetpu
