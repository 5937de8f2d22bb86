// SPDX-License-Identifier: LGPL-2.1-or-later
// Every load-balancing policy of planner_catalog.h as a StarPU policy: divisible jobs get
// the policy's planner (node_planner.h), or fixed blocks for a policy without one; ordinary
// tasks are placed by StarPU's own scheduling components (component_policy.h).
#include <deque>

#include "runtime/start/policy_registry.h"
#include "sched_policies/component_policy.h"
#include "sched_policies/node_planner.h"
#include "sched_policies/planner_catalog.h"

namespace {

// Registered from a static initializer, as every hetpu policy is (policy_registry.h).
struct LoadBalancingPolicies {
    std::deque<struct starpu_sched_policy> policies;  // a deque: registered pointers stay valid
    LoadBalancingPolicies()
    {
        for (const hetpu::PlannerPolicy &p : hetpu::planner_policies()) {
            policies.push_back(
                hetpu::component_policy(p.name.c_str(), p.description.c_str(), p.unplaced_blocks_first_idle));
            hetpu::RegisteredPlannerFactory make;
            if (p.make)
                make = [&p](const std::vector<hetpu::PlannerWorker> &workers, const hetpu::BlockRules &rules) {
                    return hetpu::make_node_planner(p, workers, rules);
                };
            hetpu::register_policy(&policies.back(), make);
        }
    }
};

const LoadBalancingPolicies load_balancing_policies;

}  // namespace
