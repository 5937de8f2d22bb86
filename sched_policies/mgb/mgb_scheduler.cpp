// SPDX-License-Identifier: LGPL-2.1-or-later
// See mgb_scheduler.h. Locking: one policy mutex guards the scheduler's state; the Ledger's
// own lock (a process-shared mutex with the arbiter) is taken inside it, never the other
// way round, and StarPU is never called with the Ledger locked. Workers are woken after
// the policy mutex is released.
#include "common/settings.h"
#include "sched_policies/mgb/mgb_scheduler.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "sched_policies/mgb/arbiter/grant_trace.h"
#include "sched_policies/mgb/arbiter/ledger_access.h"
#include "sched_policies/mgb/arbiter/node_arbiter.h"
#include "sched_policies/mgb/core/completion_watch.h"
#include "sched_policies/mgb/core/handle_residency.h"
#include "sched_policies/mgb/core/wait_queue.h"
#include "sched_policies/mgb/device_discovery.h"
#include "sched_policies/mgb/gpu_needs_registry.h"

namespace hetpu::mgb {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// hetpu's start-up rejects an invalid value before StarPU starts; only a StarPU that loads
// the policy itself (STARPU_SCHED_LIB) gets here with one, in a callback that cannot fail:
// it is said, and the default stands.
unsigned setting_or(const char *name, unsigned fallback)
{
    try {
        return static_cast<unsigned>(Settings().whole(name).value_or(fallback));
    } catch (const SettingError &e) {
        std::fprintf(stderr, "hetpu: %s; using %u\n", e.what(), fallback);
        return fallback;
    }
}

bool verbose()
{
    try {
        return Settings().flag_or("HETPU_VERBOSE", false);
    } catch (const SettingError &) {
        return false;
    }
}

// The callback of every task the policy hands out (Scheduler::watch_completion).
void completion_callback(void *arg);

std::string task_label(struct starpu_task *task)
{
    const char *name = task->name ? task->name : (task->cl && task->cl->name ? task->cl->name : nullptr);
    return name ? std::string("'") + name + "'" : std::string("(unnamed)");
}

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
};

class Scheduler {
public:
    Scheduler(unsigned sched_ctx_id, Algorithm algorithm);
    ~Scheduler();

    int push(struct starpu_task *task);
    struct starpu_task *pop(int worker);
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
    void register_devices();
    TaskInfo describe(struct starpu_task *task) const;
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

    unsigned ctx_;
    Algorithm algorithm_;
    int32_t pid_ = static_cast<int32_t>(getpid());
    uint32_t cg_ratio_;
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
    size_t waiting_with_cpu_ = 0;  // waiting tasks an idle CPU worker could take
    HandleResidency residency_;
    std::vector<uint64_t> mirrored_;  // others' reservations declared to StarPU, per device

    std::thread poller_;
    std::condition_variable poll_cv_;
    bool stopping_ = false;
};

Scheduler::Scheduler(unsigned sched_ctx_id, Algorithm algorithm)
    : ctx_(sched_ctx_id), algorithm_(algorithm), cg_ratio_(setting_or("HETPU_CG_RATIO", 2)),
      waiting_(setting_or("HETPU_MGB_AGING", 16)), residency_(0)
{
    const char *policy = algorithm_name(algorithm);
    if (!NodeArbiter::disabled_by_environment()) {
        const std::string name = NodeArbiter::default_name();
        try {
            ledger_ = NodeArbiter::open(name, policy);
        } catch (const std::runtime_error &e) {
            std::fprintf(stderr,
                         "hetpu %s: node-wide arbiter %s unavailable (%s); devices are not shared safely "
                         "with other processes (set HETPU_MGB_ARBITER=off to silence this)\n",
                         policy, name.c_str(), e.what());
        }
    }
    if (!ledger_)
        ledger_ = std::make_unique<LocalLedger>();
    try {
        trace_ = GrantTrace::from_environment();
    } catch (const std::runtime_error &e) {
        std::fprintf(stderr, "hetpu %s: no grant trace: %s\n", policy, e.what());
    }
    if (ledger_->node_wide())
        poller_ = std::thread([this] { poll_loop(); });
}

Scheduler::~Scheduler()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    poll_cv_.notify_all();
    if (poller_.joinable())
        poller_.join();
    for (size_t d = 0; d < devices_.size(); ++d)
        if (mirrored_[d])
            starpu_memory_deallocate(devices_[d].memory_node, mirrored_[d]);
    // Grants of tasks still assigned (none after a clean shutdown) die with the process:
    // the arbiter's destructor releases everything this PID holds.
}

void Scheduler::workers_added()
{
    std::lock_guard<std::mutex> lock(mutex_);
    setup_devices();
}

void Scheduler::setup_devices()
{
    devices_ = discover_accelerators(ctx_);
    cpu_workers_.clear();
    const int nworkers = static_cast<int>(starpu_worker_get_count());
    queue_of_.resize(nworkers);
    busy_.assign(nworkers, 0);
    device_of_worker_.assign(nworkers, -1);
    residency_ = HandleResidency(static_cast<unsigned>(devices_.size()));
    mirrored_.assign(devices_.size(), 0);

    struct starpu_worker_collection *workers = starpu_sched_ctx_get_worker_collection(ctx_);
    struct starpu_sched_ctx_iterator it;
    workers->init_iterator(workers, &it);
    while (workers->has_next(workers, &it)) {
        const int w = static_cast<int>(workers->get_next(workers, &it));
        if (starpu_worker_get_type(w) == STARPU_CPU_WORKER)
            cpu_workers_.push_back(w);
    }
    if (devices_.size() > kMaxDevices) {
        std::fprintf(stderr, "hetpu %s: %zu accelerators, only the first %u are used\n", algorithm_name(algorithm_),
                     devices_.size(), kMaxDevices);
        devices_.resize(kMaxDevices);
    }
    for (size_t d = 0; d < devices_.size(); ++d)
        for (int w : devices_[d].workers)
            device_of_worker_[w] = static_cast<int>(d);
    ledger_index_.assign(devices_.size(), -1);
    registered_ = false;
}

// StarPU learns a device's memory size (and STARPU_LIMIT_*_MEM) when its driver starts,
// after the policy's add_workers: devices join the Ledger on the first push, once
// starpu_init() has returned. Mutex held.
void Scheduler::register_devices()
{
    if (registered_)
        return;
    registered_ = true;
    for (auto &d : devices_) {
        const starpu_ssize_t total = starpu_memory_get_total(d.memory_node);
        if (total > 0) {
            d.spec.memory_bytes = static_cast<uint64_t>(total);
        } else {  // StarPU itself then allocates without a limit
            d.spec.memory_bytes = UINT64_MAX / 4;
            std::fprintf(stderr, "hetpu %s: StarPU reports no memory size for device %s; it is treated as unbounded\n",
                         algorithm_name(algorithm_), d.key.c_str());
        }
    }
    ledger_->with_ledger([&](Ledger &ledger) {
        // A device keeps the smallest capacity reported by the processes sharing it; once
        // they have all gone, the first newcomer's view replaces theirs (a stale segment
        // must not keep a limit nobody runs under any more).
        bool alone = true;
        for (const ProcessEntry &p : ledger.processes)
            if (p.pid && p.pid != pid_)
                alone = false;
        for (size_t d = 0; d < devices_.size(); ++d) {
            const int l = ledger_add_device(ledger, devices_[d].key, devices_[d].spec);
            ledger_index_[d] = l;
            if (l >= 0 && alone && ledger.devices[l].tasks == 0)
                ledger.devices[l].spec = devices_[d].spec;
        }
    });
    for (size_t d = 0; d < devices_.size(); ++d) {
        if (ledger_index_[d] < 0)
            std::fprintf(stderr, "hetpu %s: device %s cannot be tracked (%s); no task will run on it\n",
                         algorithm_name(algorithm_), devices_[d].key.c_str(), std::strerror(-ledger_index_[d]));
    }
    if (verbose())
        for (const auto &d : devices_)
            std::fprintf(stderr, "hetpu %s: device %s (%s): %.1f MiB, %u SMs, %zu worker(s); ledger %s\n",
                         algorithm_name(algorithm_), d.key.c_str(), d.spec.name, d.spec.memory_bytes / kMiB, d.spec.sms,
                         d.workers.size(), ledger_->describe().c_str());
}

TaskInfo Scheduler::describe(struct starpu_task *task) const
{
    TaskInfo info;
    struct hetpu_gpu_needs declared;
    declared_needs(task, true, &declared);
    info.needs.bytes = declared.scratch_bytes;
    info.needs.blocks = declared.blocks;
    info.needs.threads_per_block = declared.threads_per_block;
    info.needs.shared_mem_per_block = declared.shared_mem_per_block;

    const unsigned nbuffers = STARPU_TASK_GET_NBUFFERS(task);
    for (unsigned i = 0; i < nbuffers; ++i) {
        starpu_data_handle_t handle = STARPU_TASK_GET_HANDLE(task, i);
        if (handle)
            info.handles.push_back({handle, starpu_data_get_size(handle)});
    }
    for (size_t d = 0; d < devices_.size(); ++d) {
        if (ledger_index_[d] < 0)
            continue;
        for (int w : devices_[d].workers)
            if (starpu_worker_can_execute_task_first_impl(static_cast<unsigned>(w), task, nullptr)) {
                info.accelerators |= 1u << d;
                break;
            }
    }
    for (int w : cpu_workers_)
        if (starpu_worker_can_execute_task_first_impl(static_cast<unsigned>(w), task, nullptr)) {
            info.cpu = true;
            break;
        }
    return info;
}

// bytes[ledger device]: the task's scratch plus the data not yet held there by this
// process. Devices the task cannot run on, or could never fit on, are masked out: SA and
// CG ignore memory by design, but no policy may send a task where it can never run.
PlaceRequest Scheduler::request_for(const TaskInfo &info, std::vector<uint64_t> &bytes) const
{
    bytes.assign(kMaxDevices, 0);
    PlaceRequest request;
    request.needs = info.needs;
    request.pid = pid_;
    request.cg_ratio = cg_ratio_;
    request.allowed_devices = 0;
    for (size_t d = 0; d < devices_.size(); ++d)
        if (info.accelerators & (1u << d)) {
            const int l = ledger_index_[d];
            bytes[l] = info.needs.bytes + residency_.new_bytes(static_cast<unsigned>(d), info.handles);
            request.allowed_devices |= 1u << l;
        }
    request.bytes_on_device = bytes.data();
    return request;
}

void Scheduler::refuse(struct starpu_task *task, const TaskInfo &info) const
{
    uint64_t need = info.needs.bytes;
    for (const HandleUse &h : HandleResidency::distinct(info.handles))
        need += h.bytes;
    const AcceleratorDevice *largest = nullptr;
    for (size_t d = 0; d < devices_.size(); ++d)
        if ((info.accelerators & (1u << d)) && (!largest || devices_[d].spec.memory_bytes > largest->spec.memory_bytes))
            largest = &devices_[d];
    std::fprintf(stderr,
                 "hetpu %s: task %s needs %.1f MiB of device memory (%u blocks of %u threads), more than any device "
                 "that can run it holds (largest: %s, %s, %.1f MiB), and it has no CPU implementation: it can never "
                 "run. Give it less data (smaller blocks), raise the device's STARPU_LIMIT_*_MEM, or add a CPU "
                 "implementation to its codelet.\n",
                 algorithm_name(algorithm_), task_label(task).c_str(), need / kMiB, info.needs.blocks,
                 info.needs.threads_per_block, largest ? largest->key.c_str() : "none",
                 largest ? largest->spec.name : "-", largest ? largest->spec.memory_bytes / kMiB : 0.0);
    std::fflush(stderr);
    // StarPU cannot fail a single task: returning an error from push would leave the
    // application waiting for it forever. Stopping now is the only alternative to a hang.
    _exit(EXIT_FAILURE);
}

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
            a.device = static_cast<int>(local);
            a.grant = placed.grant;
            a.bytes = bytes[placed.device];
            if (const Grant *g = ledger_find_grant(ledger, placed.grant))
                a.warps = g->warps;
            a.handles = info.handles;
            residency_.hold(static_cast<unsigned>(local), info.handles);
            trace(TraceEvent::Grant, a, ledger);
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
    TaskInfo info = describe(task);

    if (!info.accelerators) {  // CPU-only: the shared CPU queue, by priority, FIFO within one
        auto pos = std::find_if(cpu_fifo_.begin(), cpu_fifo_.end(),
                                [&](struct starpu_task *t) { return t->priority < task->priority; });
        cpu_fifo_.insert(pos, task);
        starpu_push_task_end(task);
        lock.unlock();
        wake.assign(cpu_workers_.begin(), cpu_workers_.end());
        this->wake(wake);
        return 0;
    }

    // Devices that could never hold the task are dropped; with none left it is a CPU task
    // or an error.
    bool ever = false;
    uint32_t fits = 0;
    ledger_->with_ledger([&](Ledger &ledger) {
        std::vector<uint64_t> bytes;
        const PlaceRequest request = request_for(info, bytes);
        for (size_t d = 0; d < devices_.size(); ++d)
            if ((info.accelerators & (1u << d)) && could_ever_fit(ledger, ledger_index_[d], request))
                fits |= 1u << d;
        ever = fits != 0;
    });
    if (!ever && !info.cpu) {
        lock.unlock();
        refuse(task, info);
    }
    info.accelerators = fits;
    if (!ever) {
        cpu_fifo_.insert(std::find_if(cpu_fifo_.begin(), cpu_fifo_.end(),
                                      [&](struct starpu_task *t) { return t->priority < task->priority; }),
                         task);
        starpu_push_task_end(task);
        lock.unlock();
        wake.assign(cpu_workers_.begin(), cpu_workers_.end());
        this->wake(wake);
        return 0;
    }

    // Behind older waiting tasks only as far as the aging bound allows: the new task is
    // the youngest, so it goes through the same queue and drain.
    const uint64_t id = next_waiting_id_++;
    waiting_with_cpu_ += info.cpu;
    waiting_tasks_.emplace(id, Waiting{task, std::move(info)});
    waiting_.push(id);
    starpu_push_task_end(task);
    // Unless resources were freed since the last full drain, only the new task can start:
    // trying just it keeps a burst of submissions linear instead of quadratic.
    drain(wake, freed_since_drain_ ? 0 : id);
    const bool still_waiting = !waiting_.empty();
    lock.unlock();
    if (still_waiting)
        poll_cv_.notify_one();
    this->wake(wake);
    return 0;
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
        waiting_.drain([&](uint64_t id) {
            if (only && id != only)
                return false;
            Waiting &w = waiting_tasks_.at(id);
            std::vector<uint64_t> bytes;
            const PlaceRequest request = request_for(w.info, bytes);
            std::vector<uint64_t> signature(bytes);
            signature.insert(signature.end(),
                             {request.allowed_devices, w.info.needs.blocks, w.info.needs.threads_per_block,
                              w.info.needs.shared_mem_per_block, w.info.cpu ? 1u : 0u});
            if (failed.count(signature) && (!w.info.cpu || idle_cpu_worker() < 0))
                return false;
            if (!try_start(w.task, w.info, ledger, wake)) {
                failed.insert(std::move(signature));
                return false;
            }
            waiting_with_cpu_ -= w.info.cpu;
            waiting_tasks_.erase(id);
            return true;
        });
        ledger_set_waiting(ledger, pid_, static_cast<uint32_t>(waiting_.size()));
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

struct starpu_task *Scheduler::pop(int worker)
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

void Scheduler::release(const Assignment &a)
{
    --busy_[a.worker];
    if (a.device >= 0) {
        residency_.drop(static_cast<unsigned>(a.device), a.handles);
        ledger_->with_ledger([&](Ledger &ledger) {
            ledger_release(ledger, a.grant);
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
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (release_task(task, wake))
            completions_.released_by_hook(task);  // its callback has nothing left to release
    }
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

// What other processes hold on a device is declared to this process's StarPU as allocated
// memory, so its allocator evicts its own cached data instead of assuming the whole device.
void Scheduler::sync_others_reservations()
{
    if (!registered_)  // StarPU does not know the devices' sizes yet
        return;
    std::vector<uint64_t> others(devices_.size(), 0);
    ledger_->with_ledger([&](Ledger &ledger) {
        for (size_t d = 0; d < devices_.size(); ++d) {
            const int l = ledger_index_[d];
            if (l < 0)
                continue;
            uint64_t mine = 0;
            for (const Grant &g : ledger.grants)
                if (g.id && g.device == l && g.pid == pid_)
                    mine += g.bytes;
            const uint64_t reserved = ledger.devices[l].reserved_bytes;
            others[d] = reserved > mine ? reserved - mine : 0;
        }
    });
    for (size_t d = 0; d < devices_.size(); ++d) {
        if (others[d] > mirrored_[d])
            starpu_memory_allocate(devices_[d].memory_node, others[d] - mirrored_[d], STARPU_MEMORY_OVERFLOW);
        else if (others[d] < mirrored_[d])
            starpu_memory_deallocate(devices_[d].memory_node, mirrored_[d] - others[d]);
        mirrored_[d] = others[d];
    }
}

// Other processes free devices without telling this one: while tasks wait (or others hold
// memory this StarPU should know of), look again every few milliseconds.
void Scheduler::poll_loop()
{
    const auto period = std::chrono::milliseconds(setting_or("HETPU_MGB_POLL_MS", 10));
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        poll_cv_.wait_for(lock, period);
        if (stopping_)
            break;
        std::vector<int> wake;
        freed_since_drain_ = true;  // other processes may have released devices
        drain(wake);
        sync_others_reservations();
        if (!wake.empty()) {
            lock.unlock();
            this->wake(wake);
            lock.lock();
        }
    }
}

void Scheduler::wake(const std::vector<int> &workers)
{
    for (int w : workers)
        starpu_wake_worker_relax_light(w);
}

void Scheduler::trace(TraceEvent event, const Assignment &a, const Ledger &ledger)
{
    if (!trace_ || a.device < 0)
        return;
    trace_->write(
        trace_record(ledger, event, ledger_index_[a.device], pid_, a.bytes, a.warps, algorithm_name(algorithm_)));
}

Scheduler *scheduler_of(unsigned sched_ctx_id)
{
    return static_cast<Scheduler *>(starpu_sched_ctx_get_policy_data(sched_ctx_id));
}

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

void deinit(unsigned sched_ctx_id) { delete scheduler_of(sched_ctx_id); }

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
        starpu_sched_ctx_set_policy_data(sched_ctx_id, new Scheduler(sched_ctx_id, algorithm));
    } catch (const std::exception &e) {
        STARPU_ABORT_MSG("hetpu %s: cannot start: %s", algorithm_name(algorithm), e.what());
    }
}

struct starpu_sched_policy mgb_policy(const char *name, const char *description, void (*init_sched)(unsigned))
{
    struct starpu_sched_policy p = {};
    p.init_sched = init_sched;
    p.deinit_sched = deinit;
    p.push_task = push;
    p.pop_task = pop;
    p.post_exec_hook = post_exec;
    p.add_workers = add_workers;
    p.policy_name = name;
    p.policy_description = description;
    p.worker_type = STARPU_WORKER_LIST;
    return p;
}

}  // namespace hetpu::mgb
