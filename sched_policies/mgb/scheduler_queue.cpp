// SPDX-License-Identifier: LGPL-2.1-or-later
// The MGB scheduler's queue side: a task placed on a device now, run on an idle CPU worker,
// or kept waiting (backfilling with an aging bound); workers take what is placed on them;
// a finished task's reservation is released (see scheduler.h).
#include "sched_policies/mgb/scheduler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <starpu_sched_component.h>

#include "common/settings.h"
#include "node_arbiter/node_arbiter.h"

namespace hetpu::mgb::detail {

int Scheduler::idle_cpu_worker() const
{
    if (!cpu_fifo_.empty())  // the CPU workers have queued work already
        return -1;
    for (int w : cpu_workers_)
        if (busy_[w] == 0)
            return w;
    return -1;
}

void Scheduler::assign(struct starpu_task *task, Assignment a, std::vector<int> &wake)
{
    const int w = a.worker;
    // By priority, FIFO within one, like the CPU queue (searched from the back: equal
    // priorities, the common case, cost nothing).
    auto &queue = queue_of_[w];
    auto pos = queue.end();
    while (pos != queue.begin() && (*std::prev(pos))->priority < task->priority)
        --pos;
    queue.insert(pos, task);
    ++busy_[w];
    assigned_[task] = std::move(a);
    wake.push_back(w);
}

void Scheduler::record_grant(Assignment &a, int local_device, const PlaceResult &placed,
                             const std::vector<uint64_t> &bytes, const TaskInfo &info, const Ledger &ledger)
{
    a.device = local_device;
    a.grant = placed.grant;
    a.bytes = bytes[placed.device];
    if (const Grant *g = ledger_find_grant(ledger, placed.grant))
        a.warps = g->warps;
    a.handles = info.handles;
    residency_.hold(static_cast<unsigned>(local_device), placed.grant, info.handles);
    trace(TraceEvent::Grant, a, ledger);
}

bool Scheduler::try_start(struct starpu_task *task, const TaskInfo &info, Ledger &ledger, std::vector<int> &wake)
{
    if (info.accelerators) {
        std::vector<uint64_t> bytes;
        const PlaceRequest request = request_for(info, bytes);
        const PlaceResult placed = ledger_place(ledger, algorithm_, request);
        if (placed.status == PlaceStatus::Placed) {
            const auto local =
                std::find(ledger_index_.begin(), ledger_index_.end(), placed.device) - ledger_index_.begin();
            const AcceleratorDevice &device = devices_[local];
            // The device's least-loaded worker that can run the task (several per CUDA
            // device with STARPU_NWORKER_PER_CUDA).
            int best = -1;
            for (int w : device.workers)
                if (starpu_worker_can_execute_task_first_impl(static_cast<unsigned>(w), task, nullptr) &&
                    (best < 0 || busy_[w] < busy_[best]))
                    best = w;
            Assignment a;
            a.worker = best;
            record_grant(a, static_cast<int>(local), placed, bytes, info, ledger);
            const bool backlog = busy_[best] > 0;
            assign(task, std::move(a), wake);
            if (backlog && info.cpu)  // an idle CPU worker may take it (steal_for_cpu)
                for (int w : cpu_workers_)
                    if (busy_[w] == 0)
                        wake.push_back(w);
            return true;
        }
    }
    if (info.cpu) {
        const int w = idle_cpu_worker();
        if (w >= 0) {
            Assignment a;
            a.worker = w;
            assign(task, std::move(a), wake);
            return true;
        }
    }
    return false;
}

int Scheduler::push(struct starpu_task *task)
{
    std::vector<int> wake;
    starpu_worker_relax_on();
    std::unique_lock<std::mutex> lock(mutex_);
    starpu_worker_relax_off();
    register_devices();
    // Pushed back after it was handed out (a codelet that returned -EAGAIN): what that
    // placement holds is given back before the task is placed again.
    if (auto again = assigned_.find(task); again != assigned_.end()) {
        release(again->second);
        assigned_.erase(again);
        freed_since_drain_ = true;
        const CompletionWatch::Completion c = completions_.abandoned(task);  // that hand-out never reports
        if (c.restore)
            task->callback_func = c.field;
    }
    if (placed_by_tree(task)) {
        lock.unlock();
        return starpu_sched_tree_push_task(task);  // ends the push when a worker takes it
    }
    place(task, describe(task), wake, true);
    const bool still_waiting = !waiting_.empty();
    lock.unlock();
    if (still_waiting)
        poll_cv_.notify_one();
    this->wake(wake);
    return 0;
}

bool Scheduler::placed_by_tree(struct starpu_task *task) const
{
    struct hetpu_gpu_needs declared;
    if (declared_needs(task, false, &declared))
        return false;
    const TaskInfo info = describe(task);
    if (!info.cpu)
        return false;
    // A device that could never hold the task must not be offered to the tree: its choice
    // would prefetch the data there, a request StarPU can never satisfy, and the device
    // worker would never ask for the task (seen: a hang). Such a task is MGB's (the CPU).
    bool every_device_could = true;
    ledger_->with_ledger([&](Ledger &ledger) {
        std::vector<uint64_t> bytes;
        const PlaceRequest request = request_for(info, bytes);
        for (size_t d = 0; d < devices_.size(); ++d)
            if ((info.accelerators & (1u << d)) && !could_ever_fit(ledger, ledger_index_[d], request))
                every_device_could = false;
    });
    return every_device_could;
}

void Scheduler::place(struct starpu_task *task, TaskInfo info, std::vector<int> &wake, bool end_push)
{
    const auto to_cpu_queue = [&] {  // the shared CPU queue, by priority, FIFO within one
        cpu_fifo_.insert(std::find_if(cpu_fifo_.begin(), cpu_fifo_.end(),
                                      [&](struct starpu_task *t) { return t->priority < task->priority; }),
                         task);
        if (end_push)
            starpu_push_task_end(task);
        wake.insert(wake.end(), cpu_workers_.begin(), cpu_workers_.end());
    };
    if (!info.accelerators) {
        to_cpu_queue();
        return;
    }

    // Devices that could never hold the task are dropped; with none left it is a CPU task
    // or an error.
    uint32_t fits = 0;
    ledger_->with_ledger([&](Ledger &ledger) {
        std::vector<uint64_t> bytes;
        const PlaceRequest request = request_for(info, bytes);
        for (size_t d = 0; d < devices_.size(); ++d)
            if ((info.accelerators & (1u << d)) && could_ever_fit(ledger, ledger_index_[d], request))
                fits |= 1u << d;
    });
    if (!fits && !info.cpu)
        refuse(task, info);  // stops the program
    info.accelerators = fits;
    if (!fits) {
        to_cpu_queue();
        return;
    }

    // Behind older waiting tasks only as far as the aging bound allows: the new task is
    // the youngest, so it goes through the same queue and drain.
    const uint64_t id = next_waiting_id_++;
    waiting_with_cpu_ += info.cpu;
    waiting_tasks_.emplace(id, Waiting{task, std::move(info)});
    waiting_.push(id);
    if (end_push)
        starpu_push_task_end(task);
    // Unless resources were freed since the last full drain, only the new task can start:
    // trying just it keeps a burst of submissions linear instead of quadratic.
    drain(wake, freed_since_drain_ ? 0 : id);
}

void Scheduler::drain(std::vector<int> &wake, uint64_t only)
{
    if (waiting_.empty())
        return;
    if (!only)
        freed_since_drain_ = false;
    ledger_->with_ledger([&](Ledger &ledger) {
        // Within one drain resources only shrink, so a request that failed once fails again:
        // identical requests (the common case of many equal tasks) are not retried.
        std::set<std::vector<uint64_t>> failed;
        older_waiting_ = 0;
        waiting_.drain([&](uint64_t id) {
            Waiting &w = waiting_tasks_.at(id);
            if (only && id != only) {
                older_waiting_ |= w.info.accelerators;
                return false;
            }
            std::vector<uint64_t> bytes;
            const PlaceRequest request = request_for(w.info, bytes);
            std::vector<uint64_t> signature(bytes);
            signature.insert(signature.end(),
                             {request.allowed_devices, w.info.needs.blocks, w.info.needs.threads_per_block,
                              w.info.needs.shared_mem_per_block, w.info.cpu ? 1u : 0u});
            if (failed.count(signature) && (!w.info.cpu || idle_cpu_worker() < 0)) {
                older_waiting_ |= w.info.accelerators;
                return false;
            }
            if (!try_start(w.task, w.info, ledger, wake)) {
                failed.insert(std::move(signature));
                older_waiting_ |= w.info.accelerators;
                return false;
            }
            waiting_with_cpu_ -= w.info.cpu;
            waiting_tasks_.erase(id);
            return true;
        });
        // What memory would let the oldest waiting task start (what a checkpoint cache on
        // the node gives back for it: nothing when it waits for compute).
        uint64_t memory_wait[kMaxDevices] = {};
        older_waiting_ = 0;
        if (!waiting_.empty()) {
            std::vector<uint64_t> bytes;
            const PlaceRequest request = request_for(waiting_tasks_.at(waiting_.oldest()).info, bytes);
            ledger_memory_wait(ledger, algorithm_, request, memory_wait);
        }
        ledger_set_waiting(ledger, pid_, static_cast<uint32_t>(waiting_.size()), memory_wait);
    });
}

// Placing a task on a device that fits it is MGB's rule, but a device may then hold a queue
// of tasks while a CPU worker idles (a slow accelerator, or many small tasks). An idle CPU
// worker takes the last task queued on the most loaded busy device when that task has a CPU
// version and, where StarPU's perfmodels are calibrated on both, when it would finish sooner
// on the CPU than behind the device's queue; its reservation is released.
void Scheduler::steal_for_cpu(int cpu_worker)
{
    int victim = -1;
    for (const auto &device : devices_)
        for (int w : device.workers)
            if (!queue_of_[w].empty() && busy_[w] > queue_of_[w].size() &&  // running one, others queued
                (victim < 0 || queue_of_[w].size() > queue_of_[victim].size()))
                victim = w;
    if (victim < 0)
        return;
    auto &queue = queue_of_[victim];
    for (size_t i = queue.size(); i-- > 0;) {
        struct starpu_task *task = queue[i];
        unsigned cpu_impl = 0, dev_impl = 0;
        if (!starpu_worker_can_execute_task_first_impl(static_cast<unsigned>(cpu_worker), task, &cpu_impl))
            continue;
        starpu_worker_can_execute_task_first_impl(static_cast<unsigned>(victim), task, &dev_impl);
        const double on_cpu =
            starpu_task_expected_length(task, starpu_worker_get_perf_archtype(cpu_worker, ctx_), cpu_impl);
        const double on_dev =
            starpu_task_expected_length(task, starpu_worker_get_perf_archtype(victim, ctx_), dev_impl);
        const double ahead = static_cast<double>(i + 1);  // queued before it, plus the running one
        if (std::isfinite(on_cpu) && std::isfinite(on_dev) && on_cpu > 0 && on_dev > 0 &&
            on_cpu >= on_dev * (ahead + 1))
            continue;  // the device would still finish it first
        Assignment &a = assigned_.at(task);
        release(a);
        queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(i));
        Assignment moved;
        moved.worker = cpu_worker;
        a = std::move(moved);
        ++busy_[cpu_worker];
        queue_of_[cpu_worker].push_back(task);
        freed_since_drain_ = true;
        return;
    }
}

struct starpu_task *Scheduler::pop_own(int worker)
{
    std::vector<int> wake;
    struct starpu_task *task = nullptr;
    {
        starpu_worker_relax_on();
        std::lock_guard<std::mutex> lock(mutex_);
        starpu_worker_relax_off();
        auto &mine = queue_of_[worker];
        if (mine.empty() && device_of_worker_[worker] < 0) {
            if (!cpu_fifo_.empty()) {
                for (auto it = cpu_fifo_.begin(); it != cpu_fifo_.end(); ++it)
                    if (starpu_worker_can_execute_task_first_impl(static_cast<unsigned>(worker), *it, nullptr)) {
                        Assignment a;
                        a.worker = worker;
                        ++busy_[worker];
                        assigned_[*it] = std::move(a);
                        mine.push_back(*it);
                        cpu_fifo_.erase(it);
                        break;
                    }
            } else if (busy_[worker] == 0 && waiting_with_cpu_ > 0) {
                drain(wake);  // an idle CPU worker may take a waiting task with a CPU version
            }
            if (mine.empty() && busy_[worker] == 0)
                steal_for_cpu(worker);
        }
        if (!mine.empty()) {
            task = mine.front();
            mine.pop_front();
            watch_completion(task);
        }
    }
    if (task) {
        unsigned nimpl = 0;
        starpu_worker_can_execute_task_first_impl(static_cast<unsigned>(worker), task, &nimpl);
        starpu_task_set_implementation(task, nimpl);
    }
    wake.erase(std::remove(wake.begin(), wake.end(), worker), wake.end());
    this->wake(wake);
    return task;
}

// What MGB placed for the worker comes first; then what the component tree queued for it,
// through the Ledger's admission on a device (admit_from_tree).
struct starpu_task *Scheduler::pop(int worker)
{
    if (struct starpu_task *task = pop_own(worker))
        return task;
    for (;;) {
        struct starpu_task *task = starpu_sched_tree_pop_task(ctx_);
        if (!task)
            break;
        std::vector<int> wake;
        bool admitted, still_waiting;
        {
            starpu_worker_relax_on();
            std::lock_guard<std::mutex> lock(mutex_);
            starpu_worker_relax_off();
            admitted = admit_from_tree(task, worker, wake);
            still_waiting = !waiting_.empty();
        }
        if (still_waiting)
            poll_cv_.notify_one();
        wake.erase(std::remove(wake.begin(), wake.end(), worker), wake.end());
        this->wake(wake);
        if (admitted)
            return task;
    }
    return pop_own(worker);  // a task taken back from the tree may have been placed here
}

bool Scheduler::admit_from_tree(struct starpu_task *task, int worker, std::vector<int> &wake)
{
    const int d = device_of_worker_[worker];
    Assignment a;
    a.worker = worker;
    a.from_tree = true;
    TaskInfo info;
    if (d >= 0) {
        info = describe(task);
        uint32_t waited = 0;  // devices older waiting tasks could use: they go first (aging)
        for (const auto &w : waiting_tasks_)
            waited |= w.second.info.accelerators;
        bool placed = false;
        if (ledger_index_[d] >= 0 && !(waited & (1u << d)) && (info.accelerators & (1u << d))) {
            TaskInfo here = info;
            here.accelerators = 1u << d;
            ledger_->with_ledger([&](Ledger &ledger) {
                std::vector<uint64_t> bytes;
                const PlaceResult result = ledger_place(ledger, algorithm_, request_for(here, bytes));
                if (result.status != PlaceStatus::Placed)
                    return;
                placed = true;
                record_grant(a, d, result, bytes, info, ledger);
            });
        }
        if (!placed) {
            // The tree counted the task on this worker: it is taken off that count (as if
            // it started and ended here), and MGB places it.
            starpu_sched_component_worker_pre_exec_hook(task, ctx_);
            starpu_sched_component_worker_post_exec_hook(task, ctx_);
            place(task, std::move(info), wake, false);
            return false;
        }
    }
    ++busy_[worker];
    assigned_[task] = std::move(a);
    watch_completion(task);
    return true;
}

void Scheduler::task_starting(struct starpu_task *task)
{
    bool from_tree;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = assigned_.find(task);
        from_tree = it != assigned_.end() && it->second.from_tree;
    }
    if (from_tree)  // the tree's worker component follows its expected end
        starpu_sched_component_worker_pre_exec_hook(task, ctx_);
}

void Scheduler::release(const Assignment &a)
{
    --busy_[a.worker];
    if (a.device >= 0) {
        // Shared data this task paid for stays counted while another task here uses it.
        const std::vector<HandleTransfer> handed = residency_.drop(static_cast<unsigned>(a.device), a.grant, a.handles);
        ledger_->with_ledger([&](Ledger &ledger) {
            ledger_release_handing_over(ledger, a.grant, handed.data(), handed.size());
            trace(TraceEvent::Release, a, ledger);
        });
    }
}

// StarPU calls post_exec_hook for the application's tasks only; the tasks it submits itself
// (a reduction's combining tasks) never reach it, and their device reservation and worker
// count would be held for good (seen: StarPU's own cg example under sa, whose dot products'
// reduction tasks kept the only device reserved, and the program hung; under mgb each
// leaked its bytes). So every task handed out also reports through its callback
// (core/completion_watch.h). Only the task's callback field changes, never its argument,
// which StarPU reads when it calls the callback, after the task's dependencies are released
// and the application may already have resubmitted it (seen: tag_restartable, 64 tasks
// resubmitted 256 times, crashed one run in six when the argument was borrowed), and frees
// with the task under callback_arg_free. The callback finds its task with
// starpu_task_get_current(), which StarPU sets for the callback's duration. Mutex held.
void Scheduler::watch_completion(struct starpu_task *task)
{
    task->callback_func =
        completions_.handed_out(task, task->callback_func, task->cl ? task->cl->callback_func : nullptr);
}

Scheduler::Callback Scheduler::task_finished(struct starpu_task *task)
{
    std::vector<int> wake;
    CompletionWatch::Completion c;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        c = completions_.completed(task);
        if (c.restore)
            task->callback_func = c.field;
        if (c.release)
            release_task(task, wake);
    }
    this->wake(wake);
    return c.run;
}

void Scheduler::task_done(struct starpu_task *task)
{
    std::vector<int> wake;
    bool from_tree = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = assigned_.find(task); it != assigned_.end())
            from_tree = it->second.from_tree;
        if (release_task(task, wake))
            completions_.released_by_hook(task);  // its callback has nothing left to release
    }
    if (from_tree)
        starpu_sched_component_worker_post_exec_hook(task, ctx_);
    this->wake(wake);
}

bool Scheduler::release_task(struct starpu_task *task, std::vector<int> &wake)
{
    auto it = assigned_.find(task);
    if (it == assigned_.end())
        return false;  // not placed by us (a task for a specific worker), or released already
    release(it->second);
    assigned_.erase(it);
    freed_since_drain_ = true;
    drain(wake);
    if (ledger_->node_wide())
        sync_others_reservations();
    return true;
}

}  // namespace hetpu::mgb::detail
