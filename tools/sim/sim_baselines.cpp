// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/sim_baselines.h"

#include <limits>
#include <map>

#include "tools/sim/optimum.h"
#include "tools/sim/simulated_unit.h"
#include "tools/sim/static_planner.h"

namespace hetpu::sim {

namespace {

// What a user gets by running on the fastest kind of unit alone (the GPU alone): the exact
// optimum over that kind's units, every other unit idle.
SimResult best_single_kind(const Scenario &scenario, const std::vector<SimulatedUnit> &units, const SimOptions &options)
{
    std::map<std::string, std::vector<size_t>> kinds;
    for (size_t i = 0; i < units.size(); ++i)
        kinds[scenario.units[i].unit_class].push_back(i);
    std::vector<uint64_t> blocks;
    double best_s = std::numeric_limits<double>::infinity();
    std::string best_kind;
    for (const auto &[kind, members] : kinds) {
        std::vector<SimulatedUnit> subset;
        for (size_t i : members)
            subset.push_back(units[i]);
        check_optimum_job(subset.size(), scenario.workload, scenario.granule);
        const StaticDistribution d = optimum_distribution(subset, scenario.workload, scenario.granule);
        if (d.makespan_s < best_s) {
            best_s = d.makespan_s;
            best_kind = kind;
            blocks.assign(units.size(), 0);
            for (size_t j = 0; j < members.size(); ++j)
                blocks[members[j]] = d.blocks[j];
        }
    }
    StaticPlanner planner("best-single-kind:" + best_kind, blocks);
    return simulate(scenario, planner, options);
}

}  // namespace

const std::vector<std::string> &baseline_names()
{
    static const std::vector<std::string> names = {"optimum", "optimum-noisy", "best-single-kind"};
    return names;
}

const char *baselines_help()
{
    return "optimum (best static distribution, exact at granule resolution, noise-free) or optimum-noisy (that "
           "distribution, one block per unit, run with the seed's noise and the slowdowns), best-single-kind (the "
           "optimum over the one unit kind that finishes first alone, the others idle, run noisy as optimum-noisy)";
}

SimResult run_baseline(const std::string &name, const Scenario &scenario, const SimOptions &options)
{
    const std::vector<SimulatedUnit> units(scenario.units.begin(), scenario.units.end());
    if (name == "best-single-kind")
        return best_single_kind(scenario, units, options);
    check_optimum_job(units.size(), scenario.workload, scenario.granule);
    const StaticDistribution best = optimum_distribution(units, scenario.workload, scenario.granule);
    if (name == "optimum")
        return simulate_static(scenario, best, "optimum");
    StaticPlanner planner("optimum-noisy", best.blocks);
    return simulate(scenario, planner, options);
}

}  // namespace hetpu::sim
