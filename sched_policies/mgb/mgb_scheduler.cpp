// SPDX-License-Identifier: LGPL-2.1-or-later
// See mgb_scheduler.h: the ops table over the scheduler of scheduler.h. Nothing may unwind
// into StarPU: every callback catches and stops the program with the reason (a lost task
// would hang it).
#include "sched_policies/mgb/mgb_scheduler.h"

#include <starpu_sched_component.h>

#include <exception>

#include "sched_policies/component_policy.h"
#include "sched_policies/mgb/scheduler.h"

namespace hetpu::mgb {

namespace detail {

namespace {

// The context's policy data is the component tree (StarPU's starpu_sched_tree_* functions
// read it there); the scheduler is kept here.
Scheduler *schedulers[STARPU_NMAX_SCHED_CTXS];

}  // namespace

Scheduler *scheduler_of(unsigned sched_ctx_id) { return schedulers[sched_ctx_id]; }

void completion_callback(void *arg)
{
    struct starpu_task *task = starpu_task_get_current();
    if (!task)
        STARPU_ABORT_MSG("hetpu mgb: a task's callback ran without its task");
    Scheduler::Callback run = nullptr;
    try {
        run = scheduler_of(task->sched_ctx)->task_finished(task);
    } catch (const std::exception &e) {
        STARPU_ABORT_MSG("hetpu mgb: %s after a task", e.what());
    }
    if (run)
        run(arg);  // the task's own argument: StarPU passed it, untouched
}

}  // namespace detail

namespace {

using detail::Scheduler;
using detail::scheduler_of;

void deinit(unsigned sched_ctx_id)
{
    starpu_sched_tree_deinitialize(sched_ctx_id);
    delete scheduler_of(sched_ctx_id);
    detail::schedulers[sched_ctx_id] = nullptr;
}

int push(struct starpu_task *task)
{
    try {
        return scheduler_of(task->sched_ctx)->push(task);
    } catch (const std::exception &e) {  // nothing may unwind into StarPU; a lost task hangs
        STARPU_ABORT_MSG("hetpu mgb: %s while scheduling a task", e.what());
    }
}

struct starpu_task *pop(unsigned sched_ctx_id)
{
    try {
        return scheduler_of(sched_ctx_id)->pop(starpu_worker_get_id_check());
    } catch (const std::exception &e) {
        STARPU_ABORT_MSG("hetpu mgb: %s while taking a task", e.what());
    }
}

void pre_exec(struct starpu_task *task, unsigned sched_ctx_id)
{
    try {
        scheduler_of(sched_ctx_id)->task_starting(task);
    } catch (const std::exception &e) {
        STARPU_ABORT_MSG("hetpu mgb: %s before a task", e.what());
    }
}

void post_exec(struct starpu_task *task, unsigned sched_ctx_id)
{
    try {
        scheduler_of(sched_ctx_id)->task_done(task);
    } catch (const std::exception &e) {
        STARPU_ABORT_MSG("hetpu mgb: %s after a task", e.what());
    }
}

void add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
    starpu_sched_tree_add_workers(sched_ctx_id, workerids, nworkers);
    for (unsigned i = 0; i < nworkers; i++)
        starpu_sched_ctx_worker_shares_tasks_lists(workerids[i], sched_ctx_id);
    try {
        scheduler_of(sched_ctx_id)->workers_added();
    } catch (const std::exception &e) {
        STARPU_ABORT_MSG("hetpu mgb: %s while adding workers", e.what());
    }
}

}  // namespace

void mgb_init(unsigned sched_ctx_id, Algorithm algorithm)
{
    // Announce a priority range (as StarPU's prio policies do) unless the user set one, so
    // applications that set task priorities see them honoured.
    if (!starpu_sched_ctx_min_priority_is_set(sched_ctx_id))
        starpu_sched_ctx_set_min_priority(sched_ctx_id, -5);
    if (!starpu_sched_ctx_max_priority_is_set(sched_ctx_id))
        starpu_sched_ctx_set_max_priority(sched_ctx_id, 5);
    try {
        detail::schedulers[sched_ctx_id] = new Scheduler(sched_ctx_id, algorithm);
    } catch (const std::exception &e) {
        STARPU_ABORT_MSG("hetpu %s: cannot start: %s", algorithm_name(algorithm), e.what());
    }
    build_component_tree(sched_ctx_id);  // places the tasks MGB declares nothing for (scheduler.h)
}

struct starpu_sched_policy mgb_policy(const char *name, const char *description, void (*init_sched)(unsigned))
{
    struct starpu_sched_policy p = {};
    p.init_sched = init_sched;
    p.deinit_sched = deinit;
    p.push_task = push;
    p.pop_task = pop;
    p.pre_exec_hook = pre_exec;
    p.post_exec_hook = post_exec;
    p.add_workers = add_workers;
    p.remove_workers = starpu_sched_tree_remove_workers;
    p.policy_name = name;
    p.policy_description = description;
    p.worker_type = STARPU_WORKER_LIST;
    return p;
}

}  // namespace hetpu::mgb
