// SPDX-License-Identifier: LGPL-2.1-or-later
// The central queue (by priority, then FIFO) shared by hetpu's policies for ordinary tasks (see
// central_queue.cpp). A policy file builds its ops table from it and adds its name,
// description and block planner.
#pragma once

#include <starpu.h>

namespace hetpu {

void central_queue_init(unsigned sched_ctx_id);
void central_queue_deinit(unsigned sched_ctx_id);
int central_queue_push(struct starpu_task *task);
// Earliest predicted finish by StarPU's calibrated perfmodels, else central_queue_push.
int model_queue_push(struct starpu_task *task);
struct starpu_task *central_queue_pop(unsigned sched_ctx_id);
void central_queue_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers);

// An ops table filled with the functions above; model_placement selects model_queue_push.
struct starpu_sched_policy central_queue_policy(const char *name, const char *description, bool model_placement);

}  // namespace hetpu
