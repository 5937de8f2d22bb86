// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/planner_catalog.h"

#include "sched_policies/hdss/core/hdss_planner.h"
#include "sched_policies/pareto/core/pareto_family.h"
#include "sched_policies/plbhac/core/plbhac_family.h"

namespace hetpu {

const std::vector<PlannerPolicy> &planner_policies()
{
    static const std::vector<PlannerPolicy> policies = {
        {"greedy", "fixed-size blocks, first idle PU takes the next (PLB-HAC paper baseline)", nullptr, true, 0},
        {"plb-hac", "profile-based load balancing: online curve fits + equal-finish block sizes (PLB-HAC paper)",
         make_plbhac_family, false, kUsesTrace | kUsesModels | kUsesCodeletModel},
        {"hdss", "HDSS: adaptive phase with least-squares weights, then decreasing weighted blocks", make_hdss_family,
         false, 0},
        {"hepopta", "Pareto-optimal time/dynamic-energy block per PU from calibrated profiles (HEPOPTA paper)",
         make_hepopta_family, false, kUsesProfiles},
        {"htpopta", "Pareto-optimal time/total-energy block per PU from calibrated profiles (HTPOPTA paper)",
         make_htpopta_family, false, kUsesProfiles},
    };
    return policies;
}

const PlannerPolicy *find_planner_policy(std::string_view name)
{
    for (const PlannerPolicy &p : planner_policies())
        if (p.name == name)
            return &p;
    return nullptr;
}

std::string planner_policy_names(unsigned uses, const char *separator)
{
    std::string names;
    for (const PlannerPolicy &p : planner_policies())
        if ((p.uses & uses) == uses)
            names += (names.empty() ? "" : separator) + p.name;
    return names;
}

}  // namespace hetpu
