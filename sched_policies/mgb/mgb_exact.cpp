// SPDX-License-Identifier: LGPL-2.1-or-later
// mgb-exact: MGB's Alg. 2: emulates the hardware's round-robin placement of thread blocks on
// SMs; memory and compute are both hard constraints, so co-located kernels never
// oversubscribe a device (least kernel slowdown), at the price of tasks waiting longer.
#include "runtime/start/policy_registry.h"
#include "sched_policies/mgb/mgb_scheduler.h"

namespace {

void init(unsigned sched_ctx_id) { hetpu::mgb::mgb_init(sched_ctx_id, hetpu::mgb::Algorithm::Exact); }

struct starpu_sched_policy mgb_exact_policy = hetpu::mgb::mgb_policy(
    "mgb-exact", "memory- and SM-safe GPU packing, per-SM block placement (MGB Alg. 2); node-wide arbiter", init);

}  // namespace

HETPU_REGISTER_POLICY(mgb_exact_policy, nullptr);
