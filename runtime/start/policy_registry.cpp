// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/start/policy_registry.h"

#include <string>

namespace hetpu {

namespace {
// Function-local static: registration runs from other files' static initializers, whose
// order relative to this file is unspecified.
std::vector<RegisteredPolicy> &registry()
{
    static std::vector<RegisteredPolicy> policies;
    return policies;
}
}  // namespace

void register_policy(struct starpu_sched_policy *policy, RegisteredPlannerFactory make_planner)
{
    registry().push_back({policy, std::move(make_planner)});
}

const std::vector<RegisteredPolicy> &registered_policies() { return registry(); }

const RegisteredPolicy *find_registered_policy(std::string_view name)
{
    for (const auto &r : registry())
        if (r.policy->policy_name && name == r.policy->policy_name)
            return &r;
    return nullptr;
}

const RegisteredPolicy *find_registered_policy(const struct starpu_sched_policy *policy)
{
    for (const auto &r : registry())
        if (r.policy == policy)
            return &r;
    return nullptr;
}

struct starpu_sched_policy *find_builtin_policy(std::string_view name)
{
    for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; ++p)
        if ((*p)->policy_name && name == (*p)->policy_name)
            return *p;
    return nullptr;
}

PolicyCatalog build_policy_catalog()
{
    PolicyCatalog catalog;
    for (const auto &r : registry())
        catalog.add({r.policy->policy_name, r.policy->policy_description ? r.policy->policy_description : "", true});
    for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; ++p)
        if ((*p)->policy_name)
            catalog.add({(*p)->policy_name, (*p)->policy_description ? (*p)->policy_description : "", false});
    return catalog;
}

}  // namespace hetpu
