// SPDX-License-Identifier: LGPL-2.1-or-later
// The MGB scheduler behind the mgb, mgb-exact, sa and cg ops tables (mgb_scheduler.h): its
// state and the declarations its two halves share. scheduler_devices.cpp discovers the
// devices, describes tasks and follows the other processes through the arbiter;
// scheduler_queue.cpp places, queues, hands out and releases tasks. Locking: one policy
// mutex guards the scheduler's state; the Ledger's own lock (a process-shared mutex with the
// arbiter) is taken inside it, never the other way round, and StarPU is never called with
// the Ledger locked. Workers are woken after the policy mutex is released.
#pragma once

#include <starpu.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "node_arbiter/grant_trace.h"
#include "node_arbiter/ledger_access.h"
#include "sched_policies/mgb/core/completion_watch.h"
#include "sched_policies/mgb/core/gpu_ledger.h"
#include "sched_policies/mgb/core/handle_residency.h"
#include "sched_policies/mgb/core/wait_queue.h"
#include "node_arbiter/device_discovery.h"
#include "sched_policies/mgb/gpu_needs_registry.h"

namespace hetpu::mgb::detail {

constexpr double kMiB = 1024.0 * 1024.0;

// A whole-number setting, or `fallback` when it is unset or invalid (see the .cpp).
unsigned setting_or(const char *name, unsigned fallback);
// HETPU_VERBOSE.
bool verbose();

// The callback of every task the policy hands out (Scheduler::watch_completion).
void completion_callback(void *arg);

class Scheduler;
// The context's scheduler (its policy data is the component tree).
Scheduler *scheduler_of(unsigned sched_ctx_id);

// The task as messages name it.
std::string task_label(struct starpu_task *task);

// What the scheduler needs to know of one task to place it.
struct TaskInfo {
    TaskNeeds needs;  // bytes: the declared scratch only
    std::vector<HandleUse> handles;
    uint32_t accelerators = 0;  // bit: local device index whose workers can run it
    bool cpu = false;           // some CPU worker can run it
};

// Where a task went.
struct Assignment {
    int worker = -1;
    int device = -1;  // local device index; -1: a CPU worker
    uint64_t grant = 0;
    uint64_t bytes = 0;
    uint64_t warps = 0;
    std::vector<HandleUse> handles;
    bool from_tree = false;  // handed out by the component tree, to this worker
};

class Scheduler {
public:
    Scheduler(unsigned sched_ctx_id, Algorithm algorithm);
    ~Scheduler();

    int push(struct starpu_task *task);
    struct starpu_task *pop(int worker);
    void task_starting(struct starpu_task *task);  // pre_exec_hook
    void task_done(struct starpu_task *task);
    // The task's completion, reported by its callback (see watch_completion): releases what
    // post_exec_hook has not, and returns the callback StarPU would have run for the task.
    using Callback = void (*)(void *);
    Callback task_finished(struct starpu_task *task);
    // StarPU adds the workers after init_sched: the devices are discovered then.
    void workers_added();

private:
    struct Waiting {
        struct starpu_task *task;
        TaskInfo info;
    };

    void setup_devices();
    // HETPU_MGB_COLOCATION for the discovered devices, said on stderr once (mgb and mgb-exact).
    void choose_colocation_model();
    void register_devices();
    TaskInfo describe(struct starpu_task *task) const;
    // A task with no declared GPU needs and a CPU version: StarPU's component tree places it
    // (CPU or device, by its cost model), and a device worker takes it only once the Ledger
    // admits it there (admit_from_tree). Mutex held.
    bool placed_by_tree(struct starpu_task *task) const;
    // MGB's own placement of a described task: a device now, an idle CPU worker, the CPU
    // queue, or the waiting queue; a task that can never run stops the program. Mutex held.
    // end_push: StarPU's push of the task ends here (not for a task taken back from the tree).
    void place(struct starpu_task *task, TaskInfo info, std::vector<int> &wake, bool end_push);
    // The tasks placed by MGB for this worker, or that it may take over (CPU workers).
    struct starpu_task *pop_own(int worker);
    // A task the tree gives a worker: a CPU worker runs it; a device worker runs it if the
    // Ledger reserves it there now and no older waiting task could use the device, else
    // MGB places it. Returns whether the worker runs it. Mutex held.
    bool admit_from_tree(struct starpu_task *task, int worker, std::vector<int> &wake);
    PlaceRequest request_for(const TaskInfo &info, std::vector<uint64_t> &bytes) const;
    [[noreturn]] void refuse(struct starpu_task *task, const TaskInfo &info) const;
    // Tries to start a task now: on a device, else on an idle CPU worker. Mutex held.
    bool try_start(struct starpu_task *task, const TaskInfo &info, Ledger &ledger, std::vector<int> &wake);
    void assign(struct starpu_task *task, Assignment a, std::vector<int> &wake);
    // Gives back what a placed task holds: its worker's count, its device reservation.
    void release(const Assignment &a);
    void watch_completion(struct starpu_task *task);  // mutex held
    // Releases what the task's placement holds, if it is placed; mutex held.
    bool release_task(struct starpu_task *task, std::vector<int> &wake);
    int idle_cpu_worker() const;
    // An idle CPU worker takes a task queued behind others on a busy device (mutex held).
    void steal_for_cpu(int cpu_worker);
    // Starts what can start (mutex held). only: just that task may start, the others are
    // passed over in queue order (nothing was freed since the last full drain, so they
    // still cannot start; the aging bound still applies to the new task).
    void drain(std::vector<int> &wake, uint64_t only = 0);
    void sync_others_reservations();  // mutex held; Ledger not held
    void poll_loop();
    void wake(const std::vector<int> &workers);
    void trace(TraceEvent event, const Assignment &a, const Ledger &ledger);
    // What the ledger granted goes into `a` (device, grant, bytes, warps, handles), the
    // task's handles are held on that device and the grant is traced (mutex and ledger held).
    void record_grant(Assignment &a, int local_device, const PlaceResult &placed, const std::vector<uint64_t> &bytes,
                      const TaskInfo &info, const Ledger &ledger);

    unsigned ctx_;
    Algorithm algorithm_;
    int32_t pid_ = static_cast<int32_t>(getpid());
    uint32_t cg_ratio_;
    Colocation colocation_ = Colocation::Mps;  // chosen once the devices are known (choose_colocation_model)
    std::unique_ptr<LedgerAccess> ledger_;
    std::unique_ptr<GrantTrace> trace_;
    std::vector<AcceleratorDevice> devices_;
    std::vector<int> ledger_index_;  // local device -> Ledger device
    bool registered_ = false;
    std::vector<int> cpu_workers_;
    std::vector<int> device_of_worker_;  // worker -> local device, -1 for CPU workers

    std::mutex mutex_;                                        // guards everything below
    std::vector<std::deque<struct starpu_task *>> queue_of_;  // per worker: placed on it
    std::deque<struct starpu_task *> cpu_fifo_;               // CPU-only tasks, by priority
    std::vector<unsigned> busy_;                              // per worker: tasks queued on it or running
    std::unordered_map<struct starpu_task *, Assignment> assigned_;
    CompletionWatch completions_{completion_callback};  // tasks out, followed through their callbacks
    WaitQueue waiting_;
    std::unordered_map<uint64_t, Waiting> waiting_tasks_;
    uint64_t next_waiting_id_ = 1;
    bool freed_since_drain_ = true;
    uint32_t older_waiting_ = 0;   // during a drain: local devices the tasks it passed over could use
    size_t waiting_with_cpu_ = 0;  // waiting tasks an idle CPU worker could take
    HandleResidency residency_;
    std::vector<uint64_t> mirrored_;  // others' reservations declared to StarPU, per device

    std::thread poller_;
    std::condition_variable poll_cv_;
    bool stopping_ = false;
};

}  // namespace hetpu::mgb::detail
