// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu's scheduling policies, each registered by its own file at load time:
//
//   static struct starpu_sched_policy greedy_policy = { .init_sched = ..., .policy_name = "greedy", ... };
//   HETPU_REGISTER_POLICY(greedy_policy, nullptr);
//
// A policy that chooses block sizes for divisible jobs passes a PlannerFactory instead of
// nullptr: the load-balancing policies are registered so from sched_policies/planner_catalog.h
// (sched_policies/load_balancing.cpp). Self-registration needs libhetpu to be a shared library (it is): a static
// archive would drop the policy objects nobody references.
#pragma once

#include <starpu.h>

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "runtime/divisible/core/block_planner.h"
#include "runtime/start/core/policy_catalog.h"

namespace hetpu {

// A PlannerFactory, or any callable of its signature (one bound to a catalog entry).
using RegisteredPlannerFactory =
    std::function<std::unique_ptr<BlockPlanner>(const std::vector<PlannerWorker> &, const BlockRules &)>;

struct RegisteredPolicy {
    struct starpu_sched_policy *policy;
    RegisteredPlannerFactory make_planner;  // empty: divisible jobs run with fixed blocks
};

void register_policy(struct starpu_sched_policy *policy, RegisteredPlannerFactory make_planner);
const std::vector<RegisteredPolicy> &registered_policies();
const RegisteredPolicy *find_registered_policy(std::string_view name);
// A registered policy by its struct, also when StarPU was started with it directly.
const RegisteredPolicy *find_registered_policy(const struct starpu_sched_policy *policy);

// hetpu's policies followed by StarPU's built-ins.
PolicyCatalog build_policy_catalog();
// A StarPU built-in policy by name, or nullptr.
struct starpu_sched_policy *find_builtin_policy(std::string_view name);

struct PolicyRegistrar {
    PolicyRegistrar(struct starpu_sched_policy &policy, PlannerFactory make_planner)
    {
        register_policy(&policy, make_planner);
    }
};

}  // namespace hetpu

#define HETPU_REGISTER_POLICY(policy, factory)                                                                         \
    static ::hetpu::PolicyRegistrar hetpu_registrar_##policy((policy), (factory))
