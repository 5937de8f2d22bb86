// SPDX-License-Identifier: LGPL-2.1-or-later
// See first_idle_queue.h. The queue lives beside the policy's data (which StarPU's component
// tree owns), in a table indexed by context.
#include "sched_policies/first_idle_queue.h"

#include <cmath>
#include <deque>
#include <new>

namespace hetpu {

namespace {

struct FirstIdleQueue {
    starpu_pthread_mutex_t mutex;
    std::deque<struct starpu_task *> fifo;  // guarded by mutex
};

FirstIdleQueue *queues[STARPU_NMAX_SCHED_CTXS];  // written by init/deinit only, before/after any push

FirstIdleQueue &queue_of(unsigned sched_ctx_id)
{
    FirstIdleQueue *q = queues[sched_ctx_id];
    STARPU_ASSERT_MSG(q, "hetpu: no first-idle queue in scheduling context %u", sched_ctx_id);
    return *q;
}

}  // namespace

void first_idle_queue_init(unsigned sched_ctx_id)
{
    auto *q = new (std::nothrow) FirstIdleQueue;
    STARPU_ASSERT_MSG(q, "hetpu: out of memory");
    STARPU_PTHREAD_MUTEX_INIT(&q->mutex, NULL);  // 1.4's macro tests `!attr`: nullptr is ill-formed there
    queues[sched_ctx_id] = q;
}

void first_idle_queue_deinit(unsigned sched_ctx_id)
{
    FirstIdleQueue *q = queues[sched_ctx_id];
    if (!q)
        return;
    STARPU_ASSERT_MSG(q->fifo.empty(), "hetpu: tasks left in the first-idle queue at shutdown");
    STARPU_PTHREAD_MUTEX_DESTROY(&q->mutex);
    delete q;
    queues[sched_ctx_id] = nullptr;
}

// Called by the submitting thread, or by a worker holding no scheduling lock of ours.
void first_idle_queue_push(struct starpu_task *task)
{
    FirstIdleQueue &q = queue_of(task->sched_ctx);
    // Who could run the task is read before it is queued: once queued, a worker may pop, run
    // and destroy it at any moment, so `task` is not touched after the unlock.
    unsigned capable[STARPU_NMAXWORKERS];
    unsigned ncapable = 0;
    struct starpu_worker_collection *workers = starpu_sched_ctx_get_worker_collection(task->sched_ctx);
    struct starpu_sched_ctx_iterator it;
    workers->init_iterator(workers, &it);
    while (workers->has_next(workers, &it)) {
        const unsigned worker = workers->get_next(workers, &it);
        if (starpu_worker_can_execute_task_first_impl(worker, task, nullptr))
            capable[ncapable++] = worker;
    }
    // Not placed by the component tree: the tree's worker hooks must not count a prediction
    // left from an earlier submission of the same task.
    task->predicted = NAN;
    task->predicted_transfer = NAN;

    starpu_worker_relax_on();
    STARPU_PTHREAD_MUTEX_LOCK(&q.mutex);
    starpu_worker_relax_off();
    try {
        q.fifo.push_back(task);
    } catch (const std::bad_alloc &) {
        // Nothing may unwind into StarPU, and a dropped task would hang the program.
        STARPU_ABORT_MSG("hetpu: out of memory while queueing a task");
    }
    starpu_push_task_end(task);
    STARPU_PTHREAD_MUTEX_UNLOCK(&q.mutex);

    // Every capable worker is woken; the first to reach the queue takes the task.
    for (unsigned i = 0; i < ncapable; ++i)
        starpu_wake_worker_relax_light(capable[i]);
}

// Called with the calling worker's scheduling mutex held.
struct starpu_task *first_idle_queue_pop(unsigned sched_ctx_id)
{
    FirstIdleQueue &q = queue_of(sched_ctx_id);
    const unsigned workerid = starpu_worker_get_id_check();
    struct starpu_task *chosen = nullptr;
    starpu_worker_relax_on();
    STARPU_PTHREAD_MUTEX_LOCK(&q.mutex);
    starpu_worker_relax_off();
    for (auto it = q.fifo.begin(); it != q.fifo.end(); ++it) {
        unsigned nimpl;
        if (starpu_worker_can_execute_task_first_impl(workerid, *it, &nimpl)) {
            chosen = *it;
            starpu_task_set_implementation(chosen, nimpl);
            q.fifo.erase(it);
            break;
        }
    }
    STARPU_PTHREAD_MUTEX_UNLOCK(&q.mutex);
    return chosen;
}

}  // namespace hetpu
