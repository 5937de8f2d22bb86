#include "sched_policies/core/min_energy.h"

#include "sched_policies/core/cheapest_within.h"
#include "sched_policies/core/profile_table.h"

#include <algorithm>
#include <limits>
#include <string>

namespace hetpu {

Distribution min_energy_distribution(const std::vector<ProcessorProfile> &profiles, Granules n)
{
    validate_profiles(profiles, n);
    const detail::ProfileTable tab(profiles, n);
    const int p = tab.procs();
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t width = static_cast<std::size_t>(n) + 1;

    // Pass 1: least energy and, among prefixes of least energy, least makespan. Keeping
    // one (energy, time) lexicographic best per prefix is exact: energy adds up and time
    // is a max, so a prefix better on both keys stays better under every completion.
    std::vector<double> e(width, inf), t(width, inf), e_next, t_next;
    e[0] = t[0] = 0.0;
    for (int i = 0; i < p; ++i) {
        e_next = e;  // idle
        t_next = t;
        for (Granules x : tab.sizes(i)) {
            const double ex = tab.energy(i, x), tx = tab.time(i, x);
            for (Granules s = x; s <= n; ++s) {
                if (e[s - x] == inf)
                    continue;
                const double ec = e[s - x] + ex, tc = std::max(t[s - x], tx);
                if (ec < e_next[s] || (ec == e_next[s] && tc < t_next[s])) {
                    e_next[s] = ec;
                    t_next[s] = tc;
                }
            }
        }
        e.swap(e_next);
        t.swap(t_next);
    }
    if (e[n] == inf)
        throw UnreachableWorkloadError(
            "pareto: workload n=" + std::to_string(n) +
            " granules cannot be formed as a sum of one profile size (or 0) per processor");
    // Pass 2: the active-count tie rule, exact only with time as a cap (cheapest_within.h).
    return evaluate_distribution(profiles, detail::cheapest_within(tab, t[n]));
}

}  // namespace hetpu
