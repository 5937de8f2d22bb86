// SPDX-License-Identifier: LGPL-2.1-or-later
// See component_policy.h. The tree is StarPU's, built by
// starpu_sched_component_initialize_simple_scheduler around its MCT decision component, the
// shape of StarPU's modular-heft (1.3) and modular-dmdas (1.4) policies:
//
//   perfmodel select ──calibrated──> mct ──> a priority queue per worker ──> worker
//          ├──uncalibrated─────────> eager (calibration first) ───────────────┘
//          └──no model────────────> eager ─────────────────────────────────────┘
//
// so a task with a calibrated model goes to the worker where it would end first, counting
// the queue already there, the data transfers it needs (and its data are prefetched there),
// every worker's expected end is corrected as tasks start and end (the worker components'
// hooks), the per-worker queues are sorted by priority, and a task without a model is taken
// by the first worker free for it. StarPU sets the priority range to any int unless the
// user set one.
//
// Divisible-job blocks that a planner gave a worker never reach the policy: they are
// submitted for that worker (execute_on_a_specific_worker), which StarPU queues on the worker
// directly. Blocks that no planner placed go down the tree like any task, or, for a policy
// that hands them to the first idle worker (greedy), to first_idle_queue.h, whose tasks a
// worker takes before asking the tree.
#include "sched_policies/component_policy.h"

#include <starpu_sched_component.h>

#include "runtime/divisible/block_run.h"
#include "runtime/start/starpu_compat.h"
#include "sched_policies/first_idle_queue.h"

namespace hetpu {

namespace {

void build_tree(unsigned sched_ctx_id)
{
    starpu_sched_component_initialize_simple_scheduler(
        reinterpret_cast<starpu_sched_component_create_t>(starpu_sched_component_mct_create), nullptr,
        STARPU_SCHED_SIMPLE_DECIDE_WORKERS | STARPU_SCHED_SIMPLE_PERFMODEL | STARPU_SCHED_SIMPLE_FIFOS_BELOW |
            STARPU_SCHED_SIMPLE_FIFOS_BELOW_PRIO | STARPU_SCHED_SIMPLE_FIFOS_BELOW_READY | STARPU_SCHED_SIMPLE_IMPL |
            HETPU_DMDA_TREE_QUEUES,
        sched_ctx_id);
}

void init_with_first_idle(unsigned sched_ctx_id)
{
    build_tree(sched_ctx_id);
    first_idle_queue_init(sched_ctx_id);
}

void deinit_with_first_idle(unsigned sched_ctx_id)
{
    first_idle_queue_deinit(sched_ctx_id);
    starpu_sched_tree_deinitialize(sched_ctx_id);
}

int push_with_first_idle(struct starpu_task *task)
{
    if (is_divisible_block(task)) {
        first_idle_queue_push(task);
        return 0;
    }
    return starpu_sched_tree_push_task(task);
}

struct starpu_task *pop_with_first_idle(unsigned sched_ctx_id)
{
    if (struct starpu_task *block = first_idle_queue_pop(sched_ctx_id))
        return block;
    return starpu_sched_tree_pop_task(sched_ctx_id);
}

}  // namespace

struct starpu_sched_policy component_policy(const char *name, const char *description, bool unplaced_blocks_first_idle)
{
    struct starpu_sched_policy p = {};
    p.init_sched = unplaced_blocks_first_idle ? init_with_first_idle : build_tree;
    p.deinit_sched = unplaced_blocks_first_idle ? deinit_with_first_idle : starpu_sched_tree_deinitialize;
    p.push_task = unplaced_blocks_first_idle ? push_with_first_idle : starpu_sched_tree_push_task;
    p.pop_task = unplaced_blocks_first_idle ? pop_with_first_idle : starpu_sched_tree_pop_task;
    p.add_workers = starpu_sched_tree_add_workers;
    p.remove_workers = starpu_sched_tree_remove_workers;
    p.pre_exec_hook = starpu_sched_component_worker_pre_exec_hook;
    p.post_exec_hook = starpu_sched_component_worker_post_exec_hook;
    p.policy_name = name;
    p.policy_description = description;
    p.worker_type = STARPU_WORKER_LIST;
    return p;
}

}  // namespace hetpu
