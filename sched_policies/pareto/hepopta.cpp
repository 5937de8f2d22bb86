// SPDX-License-Identifier: LGPL-2.1-or-later
// hepopta: divisible jobs get one block per processor, sized by a point of the exact
// Pareto front of (execution time, dynamic energy) computed by HEPOPTA from the
// job's calibrated profiles; HETPU_TRADEOFF picks the point (pareto_policy.cpp). Ordinary
// tasks are placed as under plb-hac (central_queue.h).
#include "runtime/start/policy_registry.h"
#include "sched_policies/central_queue.h"
#include "sched_policies/pareto/pareto_policy.h"

namespace {

std::unique_ptr<hetpu::BlockPlanner> make_planner(const std::vector<hetpu::PlannerWorker> &workers,
                                                  const hetpu::BlockRules &rules)
{
    return hetpu::make_pareto_policy_planner("hepopta", hetpu::EnergyObjective::Dynamic, workers, rules);
}

struct starpu_sched_policy hepopta_policy = hetpu::central_queue_policy(
    "hepopta", "Pareto-optimal time/dynamic-energy block per PU from calibrated profiles (HEPOPTA paper)", true);

}  // namespace

HETPU_REGISTER_POLICY(hepopta_policy, make_planner);
