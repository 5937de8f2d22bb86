// SPDX-License-Identifier: LGPL-2.1-or-later
// htpopta: like hepopta, with the front of (execution time, total energy = dynamic +
// P_S x time) computed by HTPOPTA; P_S from HETPU_BASE_POWER or the profile's
// base_power_w (pareto_policy.cpp).
#include "runtime/start/policy_registry.h"
#include "sched_policies/central_queue.h"
#include "sched_policies/pareto/pareto_policy.h"

namespace {

std::unique_ptr<hetpu::BlockPlanner> make_planner(const std::vector<hetpu::PlannerWorker> &workers,
                                                  const hetpu::BlockRules &rules)
{
    return hetpu::make_pareto_policy_planner("htpopta", hetpu::EnergyObjective::Total, workers, rules);
}

struct starpu_sched_policy htpopta_policy = hetpu::central_queue_policy(
    "htpopta", "Pareto-optimal time/total-energy block per PU from calibrated profiles (HTPOPTA paper)", true);

}  // namespace

HETPU_REGISTER_POLICY(htpopta_policy, make_planner);
