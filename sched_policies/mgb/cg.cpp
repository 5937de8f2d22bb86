// SPDX-License-Identifier: LGPL-2.1-or-later
// cg: core-to-GPU, the MGB paper's packing baseline: tasks go round robin to the devices,
// at most HETPU_CG_RATIO (default 2) at a time on each, blind to memory: co-located tasks
// may together exceed a device (the paper's crashes; under StarPU, eviction stalls). Like
// every hetpu policy it still never sends a task to a device that could not hold it alone.
#include "runtime/start/policy_registry.h"
#include "sched_policies/mgb/mgb_scheduler.h"

namespace {

void init(unsigned sched_ctx_id) { hetpu::mgb::mgb_init(sched_ctx_id, hetpu::mgb::Algorithm::CoreToGpu); }

struct starpu_sched_policy cg_policy = hetpu::mgb::mgb_policy(
    "cg", "round robin, HETPU_CG_RATIO tasks per device, memory-blind (MGB paper baseline)", init);

}  // namespace

HETPU_REGISTER_POLICY(cg_policy, nullptr);
