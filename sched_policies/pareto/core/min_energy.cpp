// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/min_energy.h"

#include "sched_policies/pareto/core/cheapest_within.h"
#include "sched_policies/pareto/core/workspace_buffers.h"

#include <algorithm>
#include <limits>
#include <string>

namespace hetpu {

namespace detail {

double min_energy_makespan(const ProfileTable &tab, double max_energy)
{
    MinEnergyScratch scratch;
    return min_energy_makespan(tab, max_energy, scratch);
}

double min_energy_makespan(const ProfileTable &tab, double max_energy, MinEnergyScratch &scratch)
{
    const int p = tab.procs();
    const Granules n = tab.workload();
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t width = static_cast<std::size_t>(n) + 1;

    // Only partial sums that can still become n matter: after processors 0..i, those in
    // [n - largest sizes of i+1..p-1, n].
    std::vector<Granules> suffix(p + 1, 0);
    for (int i = p - 1; i >= 0; --i) {
        Granules big = 0;
        for (const auto &[x, x_time, x_energy] : tab.points(i))
            if (x_energy <= max_energy)
                big = x;
        suffix[i] = suffix[i + 1] + big;
    }
    if (suffix[0] < n)
        return -1;

    // Least energy and, among prefixes of least energy, least makespan. Keeping one
    // (energy, time) lexicographic best per prefix is exact: energy adds up and time is a
    // max, so a prefix better on both keys stays better under every completion.
    std::vector<double> &e = scratch.e, &t = scratch.t, &e_next = scratch.e_next, &t_next = scratch.t_next;
    e.assign(width, inf);
    t.assign(width, inf);
    e_next.resize(width);  // overwritten by copies of e and t below
    t_next.resize(width);
    e[0] = t[0] = 0.0;
    Granules prefix = 0;
    for (int i = 0; i < p; ++i) {
        const Granules lo = std::max<Granules>(0, n - suffix[i + 1]);
        e_next = e;  // idle
        t_next = t;
        for (const auto &[x, x_time, x_energy] : tab.points(i)) {
            const double ex = x_energy, tx = x_time;
            if (ex > max_energy)
                continue;
            const Granules to = std::min(n, prefix + x);
            for (Granules s = std::max(lo, x); s <= to; ++s) {
                const double ec = e[s - x] + ex, tc = std::max(t[s - x], tx);
                if (ec < e_next[s] || (ec == e_next[s] && tc < t_next[s])) {
                    e_next[s] = ec;
                    t_next[s] = tc;
                }
            }
        }
        prefix += tab.largest(i);
        e.swap(e_next);
        t.swap(t_next);
    }
    return e[n] == inf ? -1 : t[n];
}

}  // namespace detail

Distribution min_energy_distribution(const std::vector<ProcessorProfile> &profiles, Granules n)
{
    validate_profiles(profiles, n);
    const detail::ProfileTable tab(profiles, n);
    const double tau = detail::min_energy_makespan(tab, std::numeric_limits<double>::infinity());
    if (tau < 0)
        throw UnreachableWorkloadError("pareto: workload n=" + std::to_string(n) +
                                       " granules cannot be formed as a sum of one profile size (or 0) per processor");
    // Pass 2: the active-count tie rule, exact only with time as a cap (cheapest_within.h).
    return evaluate_distribution(profiles, detail::cheapest_within(tab, tau));
}

}  // namespace hetpu
