// SPDX-License-Identifier: LGPL-2.1-or-later
// The StarPU side of MGB GPU packing, shared by the mgb, mgb-exact, sa and cg policies:
// they differ only in the placement Algorithm of the pure core (sched_policies/mgb/core).
//
//   tree      a task with a CPU version and no declared GPU needs is placed by StarPU's
//             component tree (component_policy.h: by its model, counting transfers, queues
//             sorted by priority); a device worker runs it only once the Ledger reserves it
//             there, else MGB takes it back and places it as below. Tasks with declared
//             needs, and tasks only a device can run, are MGB's alone:
//   push      an accelerator task is placed on a device now if the algorithm finds one
//             (its memory and compute reserved in the Ledger), else it runs on an idle CPU
//             worker when it has a CPU implementation, else it waits; a task that no device
//             could ever hold goes to the CPU, or stops the program with a clear message
//             (StarPU itself would retry eviction forever).
//   pop       a worker takes the tasks placed on it, then the tree's; CPU workers also share
//             a priority queue of CPU tasks and, when idle, take waiting tasks that have a
//             CPU version.
//   task end  the reservation is released and waiting tasks are packed again (backfilling
//             with an aging bound).
// With the node-wide arbiter the Ledger is shared by every process of the node, and a
// poller thread retries waiting tasks when other processes free devices.
#pragma once

#include <starpu.h>

#include "sched_policies/mgb/core/gpu_ledger.h"

namespace hetpu::mgb {

// An ops table running the given algorithm; init_sched must be the caller's own function
// that calls mgb_init(sched_ctx_id, algorithm) (StarPU passes no argument to init_sched).
struct starpu_sched_policy mgb_policy(const char *name, const char *description, void (*init_sched)(unsigned));
void mgb_init(unsigned sched_ctx_id, Algorithm algorithm);

}  // namespace hetpu::mgb
