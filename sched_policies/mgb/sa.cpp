// SPDX-License-Identifier: LGPL-2.1-or-later
// sa: single assignment, the MGB paper's memory-safe baseline: a device runs one
// accelerator task at a time and the first idle device takes the next one.
#include "runtime/start/policy_registry.h"
#include "sched_policies/mgb/mgb_scheduler.h"

namespace {

void init(unsigned sched_ctx_id) { hetpu::mgb::mgb_init(sched_ctx_id, hetpu::mgb::Algorithm::SingleAssignment); }

struct starpu_sched_policy sa_policy =
    hetpu::mgb::mgb_policy("sa", "one accelerator task per device at a time (MGB paper baseline)", init);

}  // namespace

HETPU_REGISTER_POLICY(sa_policy, nullptr);
