// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/scenario_profiles.h"

#include <vector>

#include "tools/sim/simulated_unit.h"

namespace hetpu::sim {

uint64_t scenario_profile_step(const Scenario &scenario)
{
    for (uint64_t points = kScenarioProfilePoints; points > 1; --points) {
        const uint64_t step = scenario.workload / points;
        if (step * points == scenario.workload && step % scenario.granule == 0)
            return step;
    }
    return scenario.workload;
}

std::shared_ptr<const CalibratedProfiles> scenario_profiles(const Scenario &scenario)
{
    auto profiles = std::make_shared<CalibratedProfiles>();
    const uint64_t step = scenario_profile_step(scenario);
    for (uint64_t x = step; x <= scenario.workload; x += step)
        profiles->sizes.push_back(x);
    auto units = std::make_shared<std::vector<SimulatedUnit>>(scenario.units.begin(), scenario.units.end());
    profiles->time_s = [units](int worker, uint64_t x) {
        return units->at(static_cast<size_t>(worker)).nominal_cost(x).total();
    };
    profiles->energy_j = [units](int worker, uint64_t x) {
        const SimulatedUnit &u = units->at(static_cast<size_t>(worker));
        return u.spec().power_w * u.nominal_cost(x).total();
    };
    profiles->base_power_w = scenario.base_power_w;
    profiles->source = "the scenario's unit curves";
    return profiles;
}

}  // namespace hetpu::sim
