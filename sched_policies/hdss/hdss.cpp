// SPDX-License-Identifier: LGPL-2.1-or-later
// hdss: the HDSS baseline of the PLB-HAC paper for divisible jobs (adaptive phase with
// growing blocks and least-squares weights, then decreasing weighted blocks); ordinary
// tasks are placed as under plb-hac (central_queue.h). HETPU_HDSS_XINIT sets the first
// adaptive block.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "common/settings.h"
#include "runtime/start/policy_registry.h"
#include "sched_policies/central_queue.h"
#include "sched_policies/hdss/core/hdss_planner.h"

namespace {

std::unique_ptr<hetpu::BlockPlanner> make_planner(const std::vector<hetpu::PlannerWorker> &workers,
                                                  const hetpu::BlockRules &rules)
{
    hetpu::HdssOptions options;
    try {
        options.x_init = hetpu::Settings().whole("HETPU_HDSS_XINIT").value_or(options.x_init);
    } catch (const hetpu::SettingError &e) {
        std::fprintf(stderr, "hetpu: hdss: %s\n", e.what());
        return nullptr;
    }
    return std::make_unique<hetpu::HdssPlanner>(workers, rules, options);
}

struct starpu_sched_policy hdss_policy = hetpu::central_queue_policy(
    "hdss", "HDSS: adaptive phase with least-squares weights, then decreasing weighted blocks", true);

}  // namespace

HETPU_REGISTER_POLICY(hdss_policy, make_planner);
