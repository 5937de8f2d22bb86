// SPDX-License-Identifier: LGPL-2.1-or-later
// See shared_priority_queue.h. Locking: the queue's mutex is never held while waking a
// worker, which may pull from this queue at once.
#include "sched_policies/shared_priority_queue.h"

#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/start/starpu_compat.h"
#include "sched_policies/priority_fifo.h"

namespace hetpu {
namespace {

struct SharedQueue {
    std::mutex mutex;
    PriorityFifo<struct starpu_task *> tasks;
    std::uint64_t pushes = 0;
    // Per worker: the push count when a look found nothing it can run. Nothing new has
    // arrived while it is unchanged, so the next look is skipped (idle workers ask often).
    std::vector<std::uint64_t> nothing_since =
        std::vector<std::uint64_t>(STARPU_NMAXWORKERS, std::numeric_limits<std::uint64_t>::max());
};

SharedQueue &queue_of(struct starpu_sched_component *component) { return *static_cast<SharedQueue *>(component->data); }

int worker_below(struct starpu_sched_component *child) { return starpu_bitmap_first(HETPU_COMPONENT_WORKERS(child)); }

bool runs_on(int workerid, struct starpu_task *task)
{
    unsigned nimpl = 0;
    return workerid >= 0 && starpu_worker_can_execute_task_first_impl(static_cast<unsigned>(workerid), task, &nimpl);
}

std::optional<PriorityFifo<struct starpu_task *>::Entry> take_for(SharedQueue &q, int workerid)
{
    if (workerid < 0 || workerid >= STARPU_NMAXWORKERS)
        return std::nullopt;
    std::lock_guard<std::mutex> lock(q.mutex);
    if (q.nothing_since[static_cast<unsigned>(workerid)] == q.pushes)
        return std::nullopt;
    bool may_change = false;  // a codelet's can_execute may say yes later for the same task
    auto entry = q.tasks.take_first([workerid, &may_change](struct starpu_task *t) {
        may_change = may_change || (t->cl && t->cl->can_execute);
        return runs_on(workerid, t);
    });
    if (!entry && !may_change)
        q.nothing_since[static_cast<unsigned>(workerid)] = q.pushes;
    return entry;
}

int push_task(struct starpu_sched_component *component, struct starpu_task *task)
{
    // Every worker that can run it hears of it, and the first free one pulls it. Who can run
    // it is found before it is queued: once queued, a worker may take, run and free it.
    std::vector<struct starpu_sched_component *> to_wake;
    for (unsigned i = 0; i < component->nchildren; ++i)
        if (runs_on(worker_below(component->children[i]), task))
            to_wake.push_back(component->children[i]);
    SharedQueue &q = queue_of(component);
    {
        std::lock_guard<std::mutex> lock(q.mutex);
        q.tasks.push(task->priority, task);
        ++q.pushes;
    }
    for (struct starpu_sched_component *child : to_wake)
        child->can_pull(child);
    return 0;
}

struct starpu_task *pull_task(struct starpu_sched_component *component, struct starpu_sched_component *to)
{
    if (!to)
        return nullptr;
    auto entry = take_for(queue_of(component), worker_below(to));
    return entry ? entry->second : nullptr;
}

void deinit_data(struct starpu_sched_component *component)
{
    delete static_cast<SharedQueue *>(component->data);
    component->data = nullptr;
}

}  // namespace

struct starpu_sched_component *shared_priority_queue_create(struct starpu_sched_tree *tree)
{
    struct starpu_sched_component *component = starpu_sched_component_create(tree, "hetpu_shared_priority_queue");
    component->data = new SharedQueue();
    component->push_task = push_task;
    component->pull_task = pull_task;
    component->deinit_data = deinit_data;
    return component;
}

}  // namespace hetpu
