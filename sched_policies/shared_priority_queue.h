// SPDX-License-Identifier: LGPL-2.1-or-later
// A StarPU scheduling component for the tasks a policy cannot place by a model (no
// performance model, or one still calibrating): one priority queue shared by every worker
// below it. A task waits there until a worker with nothing else to run pulls; that worker
// then gets the most urgent task it can run (priority, then submission order:
// priority_fifo.h). Nothing is pushed into a worker's own queue ahead of time, so such tasks
// spread over whichever workers are free, never wait behind a busy worker, and run by
// priority across all workers. StarPU's eager component pushes at once to the first worker
// queue that accepts, which piled them onto the first worker with unbounded queues (1.4).
#ifndef HETPU_SCHED_POLICIES_SHARED_PRIORITY_QUEUE_H
#define HETPU_SCHED_POLICIES_SHARED_PRIORITY_QUEUE_H

#include <starpu_sched_component.h>

namespace hetpu {

// Its children must each lead to one worker, and pull from their parents when their worker
// asks for work (StarPU's best-implementation component does).
struct starpu_sched_component *shared_priority_queue_create(struct starpu_sched_tree *tree);

}  // namespace hetpu

#endif
