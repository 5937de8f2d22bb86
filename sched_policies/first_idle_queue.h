// SPDX-License-Identifier: LGPL-2.1-or-later
// One FIFO per scheduling context, shared by all its workers, each idle worker taking the
// first task it can run: how greedy hands out the divisible-job blocks that no planner
// placed ("first idle PU takes the next block"). Ordinary tasks never enter it: they go to
// StarPU's component tree (component_policy.h).
#pragma once

#include <starpu.h>

namespace hetpu {

void first_idle_queue_init(unsigned sched_ctx_id);
// Stops the program if tasks are still queued: a lost task would have hung it.
void first_idle_queue_deinit(unsigned sched_ctx_id);
// Queues the task and wakes every worker that could run it.
void first_idle_queue_push(struct starpu_task *task);
// The oldest queued task the calling worker can run (its implementation chosen), or nullptr.
struct starpu_task *first_idle_queue_pop(unsigned sched_ctx_id);

}  // namespace hetpu
