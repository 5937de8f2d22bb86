// SPDX-License-Identifier: LGPL-2.1-or-later
// See component_policy.h. The tree is built from StarPU's components in the shape of its
// modular-heft (1.3) and modular-dmdas (1.4) policies, except for the tasks no model places:
//
//   [a priority queue: the tasks the components below refuse for now]
//     perfmodel select ──calibrated──> mct ──> per worker: priority queue ──> best ──> worker
//          └──no model, or calibrating──> shared priority queue ──────────> implementation
//
// so a task with a calibrated model goes to the worker where it would end first, counting
// the queue already there and the data transfers it needs (its data are prefetched there);
// every worker's expected end is corrected as tasks start and end (the worker components'
// hooks). A task without a model, or whose model is still calibrating, waits in one queue
// shared by all workers (shared_priority_queue.h) until a worker with an empty queue pulls
// the most urgent task it can run: such tasks spread over the free workers, and their
// priorities hold across workers (StarPU's eager components there piled them onto the first
// worker's unbounded queue in 1.4, and mixed the orders of two queues in both). Each
// worker's queue is sorted by priority, data-ready tasks first within one. Any int is a valid
// priority unless the user set a range.
//
// Divisible-job blocks that a planner gave a worker never reach the policy: they are
// submitted for that worker (execute_on_a_specific_worker), which StarPU queues on the worker
// directly. Blocks that no planner placed go down the tree like any task, or, for a policy
// that hands them to the first idle worker (greedy), to first_idle_queue.h, whose tasks a
// worker takes before asking the tree.
#include "sched_policies/component_policy.h"

#include <starpu_sched_component.h>

#include <climits>
#include <cmath>

#include "runtime/divisible/block_run.h"
#include "runtime/start/starpu_compat.h"
#include "sched_policies/first_idle_queue.h"
#include "sched_policies/shared_priority_queue.h"

namespace hetpu {

void build_component_tree(unsigned sched_ctx_id)
{
    struct starpu_sched_tree *tree = starpu_sched_tree_create(sched_ctx_id);
    starpu_sched_ctx_set_policy_data(sched_ctx_id, tree);  // where StarPU's tree functions find it
    if (!starpu_sched_ctx_min_priority_is_set(sched_ctx_id))
        starpu_sched_ctx_set_min_priority(sched_ctx_id, INT_MIN);
    if (!starpu_sched_ctx_max_priority_is_set(sched_ctx_id))
        starpu_sched_ctx_set_max_priority(sched_ctx_id, INT_MAX);

    struct starpu_sched_component *decide = starpu_sched_component_mct_create(tree, nullptr);  // STARPU_SCHED_ALPHA...
    struct starpu_sched_component *unmodelled = shared_priority_queue_create(tree);
    struct starpu_sched_component_perfmodel_select_data select_data = {};
    select_data.calibrator_component = unmodelled;  // any free worker's run calibrates its kind
    select_data.no_perfmodel_component = unmodelled;
    select_data.perfmodel_component = decide;
    struct starpu_sched_component *select = starpu_sched_component_perfmodel_select_create(tree, &select_data);
    starpu_sched_component_connect(select, decide);
    starpu_sched_component_connect(select, unmodelled);
    // A queue above the decision holds what its components refuse for now (a refused push at
    // the root aborts StarPU), as in StarPU's own modular policies.
    tree->root = starpu_sched_component_prio_create(tree, nullptr);
    starpu_sched_component_connect(tree->root, select);

    struct starpu_sched_component_prio_data queue_data = {};
    queue_data.ntasks_threshold = HETPU_TREE_QUEUE_TASKS;
    queue_data.exp_len_threshold = HETPU_TREE_QUEUE_EXP_LEN;
    queue_data.ready = 1;
    HETPU_SET_PRIO_DATA_EXP(queue_data);
    for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
        struct starpu_sched_component *worker = starpu_sched_component_worker_new(sched_ctx_id, static_cast<int>(w));
        struct starpu_sched_component *implementation =
            starpu_sched_component_best_implementation_create(tree, nullptr);
        struct starpu_sched_component *queue = starpu_sched_component_prio_create(tree, &queue_data);
        starpu_sched_component_connect(implementation, worker);
        // A worker first runs what the decision queued for it, then pulls from the shared queue.
        starpu_sched_component_connect(queue, implementation);
        starpu_sched_component_connect(unmodelled, implementation);
        starpu_sched_component_connect(decide, queue);
    }
    starpu_sched_tree_update_workers(tree);
    starpu_sched_tree_update_workers_in_ctx(tree);
}

namespace {

void init_with_first_idle(unsigned sched_ctx_id)
{
    build_component_tree(sched_ctx_id);
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
    p.init_sched = unplaced_blocks_first_idle ? init_with_first_idle : build_component_tree;
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
