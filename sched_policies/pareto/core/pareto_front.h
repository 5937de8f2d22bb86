// SPDX-License-Identifier: LGPL-2.1-or-later
// Reducing a set of evaluated distributions to a 2-D Pareto front: one concept shared by
// HEPOPTA (time vs dynamic energy) and HTPOPTA (time vs total energy).
#pragma once

#include "sched_policies/pareto/core/pareto_profiles.h"

#include <vector>

namespace hetpu {

enum class EnergyObjective { Dynamic, Total };

// Keeps the distributions not dominated in (time_s, energy) where energy is the dynamic or
// the total figure; one per front point. When two share exactly the same time and energy
// the one with fewer active processors wins (the paper's tie rule: idle processors are
// free to do other work); a remaining tie keeps the earlier one in `sols`. Returns the front
// sorted by increasing energy, hence strictly decreasing time.
std::vector<Distribution> pareto_front(std::vector<Distribution> sols, EnergyObjective obj);

}  // namespace hetpu
