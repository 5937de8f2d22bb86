// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/pareto_front.h"

#include <algorithm>

namespace hetpu {

std::vector<Distribution> pareto_front(std::vector<Distribution> sols, EnergyObjective obj)
{
    auto energy = [obj](const Distribution &d) {
        return obj == EnergyObjective::Dynamic ? d.dynamic_energy_j : d.total_energy_j;
    };
    // Stable so that the documented "earlier wins" rule holds on complete ties.
    std::stable_sort(sols.begin(), sols.end(), [&](const Distribution &a, const Distribution &b) {
        if (energy(a) != energy(b))
            return energy(a) < energy(b);
        if (a.time_s != b.time_s)
            return a.time_s < b.time_s;
        return a.active < b.active;
    });
    // After the sort every earlier point has energy <= this one, so this one is dominated
    // exactly when some earlier point is at least as fast: keep only strict time records.
    std::vector<Distribution> front;
    for (Distribution &d : sols)
        if (front.empty() || d.time_s < front.back().time_s)
            front.push_back(std::move(d));
    return front;
}

}  // namespace hetpu
