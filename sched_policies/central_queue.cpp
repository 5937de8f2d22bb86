// SPDX-License-Identifier: LGPL-2.1-or-later
// A central queue shared by all workers, each worker taking the first task it can
// execute: the scheduling of ordinary (non-divisible) tasks for hetpu's policies. The queue
// is ordered by starpu_task priority, highest first, and FIFO within one priority, as
// StarPU's prio and dmdas policies do: applications (factorizations, critical paths) set
// priorities and expect them honoured whichever policy they run under. Divisible
// blocks that a planner assigns to a worker bypass it (they are pushed to that worker's
// local queue by StarPU), so the queue only ever holds tasks nobody placed.
//
// With model placement on (plb-hac, hdss), a task whose codelet has a calibrated StarPU
// performance model on every worker that can run it goes instead to the worker with the
// earliest predicted finish (its predicted free time plus the task's expected length);
// tasks without a usable model fall back to the FIFO, which is also how StarPU's
// models get their calibration samples.
#include <starpu.h>

#include <cmath>
#include <algorithm>
#include <deque>
#include <iterator>
#include <new>

#include "sched_policies/central_queue.h"

namespace hetpu {

namespace {

struct CentralQueue {
    starpu_pthread_mutex_t mutex;
    std::deque<struct starpu_task *> fifo;             // guarded by mutex; priority non-increasing
    double expected_free_us[STARPU_NMAXWORKERS] = {};  // guarded by mutex; starpu_timing_now() clock
};

CentralQueue *data_of(unsigned sched_ctx_id)
{
    return static_cast<CentralQueue *>(starpu_sched_ctx_get_policy_data(sched_ctx_id));
}

}  // namespace

void central_queue_init(unsigned sched_ctx_id)
{
    auto *data = new (std::nothrow) CentralQueue;
    STARPU_ASSERT_MSG(data, "hetpu: out of memory");
    STARPU_PTHREAD_MUTEX_INIT(&data->mutex, NULL);  // 1.4's macro tests `!attr`: nullptr is ill-formed there
    starpu_sched_ctx_set_policy_data(sched_ctx_id, data);
    // Applications scale their priorities to STARPU_MIN_PRIO..STARPU_MAX_PRIO, which stay
    // 0..0 unless the policy announces a range; the queue orders any int, so announce the
    // range of StarPU's own prio policies unless the user set one (STARPU_MIN_PRIO etc.).
    if (!starpu_sched_ctx_min_priority_is_set(sched_ctx_id))
        starpu_sched_ctx_set_min_priority(sched_ctx_id, -5);
    if (!starpu_sched_ctx_max_priority_is_set(sched_ctx_id))
        starpu_sched_ctx_set_max_priority(sched_ctx_id, 5);
}

void central_queue_deinit(unsigned sched_ctx_id)
{
    CentralQueue *data = data_of(sched_ctx_id);
    STARPU_ASSERT_MSG(data->fifo.empty(), "hetpu: tasks left in the central queue at shutdown");
    STARPU_PTHREAD_MUTEX_DESTROY(&data->mutex);
    delete data;
}

// Called by the submitting thread or, for tasks submitted from callbacks, by a worker
// holding no scheduling lock of ours.
int central_queue_push(struct starpu_task *task)
{
    const unsigned sched_ctx_id = task->sched_ctx;
    CentralQueue *data = data_of(sched_ctx_id);

    // Who could run the task is read now, before it is queued: once it is in the FIFO a
    // worker may pop, run and destroy it at any moment, so `task` must not be touched
    // after the unlock (it was, and a worker freeing the task first made this push read
    // freed memory: a segfault, seen as a hang under load).
    // On the stack: push runs once per task, and the worker count is bounded.
    unsigned capable[STARPU_NMAXWORKERS];
    unsigned ncapable = 0;
    struct starpu_worker_collection *workers = starpu_sched_ctx_get_worker_collection(sched_ctx_id);
    struct starpu_sched_ctx_iterator it;
    workers->init_iterator(workers, &it);
    while (workers->has_next(workers, &it)) {
        unsigned worker = workers->get_next(workers, &it);
        if (starpu_worker_can_execute_task_first_impl(worker, task, nullptr))
            capable[ncapable++] = worker;
    }

    starpu_worker_relax_on();
    STARPU_PTHREAD_MUTEX_LOCK(&data->mutex);
    starpu_worker_relax_off();
    try {
        // After the last task of at least the same priority: FIFO within a priority. Scanned
        // from the back, so the common case (all tasks of one priority) costs nothing.
        auto pos = data->fifo.end();
        while (pos != data->fifo.begin() && (*std::prev(pos))->priority < task->priority)
            --pos;
        data->fifo.insert(pos, task);
    } catch (const std::bad_alloc &) {
        // No exception may unwind through StarPU, and a dropped task would hang the
        // program: stop with the reason.
        STARPU_ABORT_MSG("hetpu: out of memory while queueing a task");
    }
    starpu_push_task_end(task);
    STARPU_PTHREAD_MUTEX_UNLOCK(&data->mutex);

    // Wake every worker that could run the task; the first to reach the queue takes it
    // and the others find nothing and go back to sleep. Cheap with the handful of
    // workers of one node, and it never misses a wake-up.
    for (unsigned i = 0; i < ncapable; ++i)
        starpu_wake_worker_relax_light(capable[i]);
    return 0;
}

// Called with the calling worker's scheduling mutex held.
struct starpu_task *central_queue_pop(unsigned sched_ctx_id)
{
    CentralQueue *data = data_of(sched_ctx_id);
    const unsigned workerid = starpu_worker_get_id_check();
    struct starpu_task *chosen = nullptr;

    starpu_worker_relax_on();
    STARPU_PTHREAD_MUTEX_LOCK(&data->mutex);
    starpu_worker_relax_off();
    for (auto it = data->fifo.begin(); it != data->fifo.end(); ++it) {
        unsigned nimpl;
        if (starpu_worker_can_execute_task_first_impl(workerid, *it, &nimpl)) {
            chosen = *it;
            starpu_task_set_implementation(chosen, nimpl);
            data->fifo.erase(it);
            break;
        }
    }
    STARPU_PTHREAD_MUTEX_UNLOCK(&data->mutex);
    return chosen;
}

void central_queue_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
    for (unsigned i = 0; i < nworkers; i++)
        starpu_sched_ctx_worker_shares_tasks_lists(workerids[i], sched_ctx_id);
}

// Called like central_queue_push. Lock order: the queue mutex is taken only around the
// bookkeeping, never while calling into StarPU's push.
int model_queue_push(struct starpu_task *task)
{
    if (!task->cl || !task->cl->model)
        return central_queue_push(task);
    const unsigned sched_ctx_id = task->sched_ctx;
    CentralQueue *data = data_of(sched_ctx_id);
    const double now = starpu_timing_now();

    int best = -1;
    unsigned best_impl = 0;
    double best_end = 0, best_length = 0;
    struct starpu_worker_collection *workers = starpu_sched_ctx_get_worker_collection(sched_ctx_id);
    struct starpu_sched_ctx_iterator it;
    workers->init_iterator(workers, &it);
    starpu_worker_relax_on();
    STARPU_PTHREAD_MUTEX_LOCK(&data->mutex);
    starpu_worker_relax_off();
    while (workers->has_next(workers, &it)) {
        const int worker = static_cast<int>(workers->get_next(workers, &it));
        unsigned nimpl;
        if (!starpu_worker_can_execute_task_first_impl(worker, task, &nimpl))
            continue;
        const double length =
            starpu_task_expected_length(task, starpu_worker_get_perf_archtype(worker, sched_ctx_id), nimpl);
        if (!std::isfinite(length) || length <= 0) {  // not calibrated here: let the FIFO run it
            best = -1;
            break;
        }
        const double end = std::max(now, data->expected_free_us[worker]) + length;
        if (best < 0 || end < best_end) {
            best = worker;
            best_impl = nimpl;
            best_end = end;
            best_length = length;
        }
    }
    if (best >= 0)
        data->expected_free_us[best] = std::max(now, data->expected_free_us[best]) + best_length;
    STARPU_PTHREAD_MUTEX_UNLOCK(&data->mutex);
    if (best < 0)
        return central_queue_push(task);
    starpu_task_set_implementation(task, best_impl);
    return starpu_push_local_task(best, task, 0);
}

struct starpu_sched_policy central_queue_policy(const char *name, const char *description, bool model_placement)
{
    struct starpu_sched_policy p = {};
    p.init_sched = central_queue_init;
    p.deinit_sched = central_queue_deinit;
    p.push_task = model_placement ? model_queue_push : central_queue_push;
    p.pop_task = central_queue_pop;
    p.add_workers = central_queue_add_workers;
    p.policy_name = name;
    p.policy_description = description;
    p.worker_type = STARPU_WORKER_LIST;
    return p;
}

}  // namespace hetpu
