// SPDX-License-Identifier: LGPL-2.1-or-later
// mgb: MGB's Alg. 3 (Chen, Porter, Pande, "Effective GPU Sharing Under Compiler Guidance",
// with the erratum in docs/design.md, "MGB Algorithm 3 least-loaded GPU (erratum)"): memory is a hard constraint, compute a soft one; an
// accelerator task goes to the memory-feasible device with the fewest warps in use. The
// paper's choice for throughput (1.21x Alg. 2 on its 4xV100 mixes).
#include "runtime/start/policy_registry.h"
#include "sched_policies/mgb/mgb_scheduler.h"

namespace {

void init(unsigned sched_ctx_id) { hetpu::mgb::mgb_init(sched_ctx_id, hetpu::mgb::Algorithm::LeastWarps); }

struct starpu_sched_policy mgb_policy = hetpu::mgb::mgb_policy(
    "mgb", "memory-safe GPU packing, least-loaded device by warps (MGB Alg. 3); node-wide arbiter", init);

}  // namespace

HETPU_REGISTER_POLICY(mgb_policy, nullptr);
