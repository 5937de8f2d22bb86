// SPDX-License-Identifier: LGPL-2.1-or-later
// Every load-balancing policy of planner_catalog.h as a StarPU policy: divisible jobs get
// the policy's planner (node_planner.h), or fixed blocks for a policy without one; ordinary
// tasks go through the central queue (central_queue.h), to the earliest predicted finish
// where the policy places by model and their codelet is calibrated, else to the first idle
// capable worker: never dropped or stranded. Fixed blocks through the central queue also
// make greedy a sound policy for unmodified StarPU programs under the preload library.
#include <deque>

#include "runtime/start/policy_registry.h"
#include "sched_policies/central_queue.h"
#include "sched_policies/node_planner.h"
#include "sched_policies/planner_catalog.h"

namespace {

// Registered from a static initializer, as every hetpu policy is (policy_registry.h).
struct LoadBalancingPolicies {
    std::deque<struct starpu_sched_policy> policies;  // a deque: registered pointers stay valid
    LoadBalancingPolicies()
    {
        for (const hetpu::PlannerPolicy &p : hetpu::planner_policies()) {
            policies.push_back(hetpu::central_queue_policy(p.name.c_str(), p.description.c_str(), p.model_placement));
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
