// SPDX-License-Identifier: LGPL-2.1-or-later
// The calibrated profiles `hetpu sim` feeds hepopta and htpopta: what `hetpu calibrate`
// would measure on the simulated machine. Every unit is "measured" at the same sizes, the
// multiples of workload / S for the largest S <= kScenarioProfilePoints that divides the
// workload into whole granules (S = 1 when none does, and the plan then has one unit), so
// that the workload is reachable and the exact algorithms' tables stay small. A size's time
// is the unit's nominal cost (its time curve, transfer and unseen time, without noise,
// slowdown or stall: what the optimum is computed from), its dynamic energy that time
// times the unit's "power_w"; the static power is the scenario's "base_power_w".
#pragma once

#include <cstdint>
#include <memory>

#include "sched_policies/planner_catalog.h"
#include "tools/sim/scenario.h"

namespace hetpu::sim {

constexpr uint64_t kScenarioProfilePoints = 256;

// The step between measured sizes (see above).
uint64_t scenario_profile_step(const Scenario &scenario);

std::shared_ptr<const CalibratedProfiles> scenario_profiles(const Scenario &scenario);

}  // namespace hetpu::sim
