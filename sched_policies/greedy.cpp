// SPDX-License-Identifier: LGPL-2.1-or-later
// greedy: the baseline of the PLB-HAC paper. The workload is cut into fixed-size pieces
// and the first idle processing unit takes the next piece.
//
// Divisible jobs under greedy have no planner, so their blocks are fixed (HETPU_BLOCK or
// the job's default) and go through the central queue like any other task: the first idle
// worker that can run a block takes it. That also makes greedy a sound policy for
// unmodified StarPU programs under the preload library.
#include "runtime/start/policy_registry.h"
#include "sched_policies/central_queue.h"

namespace {

struct starpu_sched_policy greedy_policy = hetpu::central_queue_policy(
    "greedy", "fixed-size blocks, first idle PU takes the next (PLB-HAC paper baseline)", false);

}  // namespace

HETPU_REGISTER_POLICY(greedy_policy, nullptr);
