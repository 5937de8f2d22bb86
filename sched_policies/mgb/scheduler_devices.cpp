// SPDX-License-Identifier: LGPL-2.1-or-later
// The MGB scheduler's device side: devices discovered and registered with the ledger, tasks
// described as the placement algorithm needs them, and what other processes hold (see
// scheduler.h).
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

#include "common/settings.h"
#include "node_arbiter/node_arbiter.h"

namespace hetpu::mgb::detail {

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

std::string task_label(struct starpu_task *task)
{
    const char *name = task->name ? task->name : (task->cl && task->cl->name ? task->cl->name : nullptr);
    return name ? std::string("'") + name + "'" : std::string("(unnamed)");
}

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
    choose_colocation_model();
}

void Scheduler::choose_colocation_model()
{
    ColocationSetting setting = ColocationSetting::Auto;
    std::string value = "auto", error;
    try {
        value = Settings().choice("HETPU_MGB_COLOCATION").value_or("auto");
    } catch (const SettingError &e) {  // see setting_or: only a policy StarPU loads itself gets here
        std::fprintf(stderr, "hetpu: %s; using auto\n", e.what());
    }
    if (!parse_colocation_setting(value.c_str(), setting, error))
        std::fprintf(stderr, "hetpu: %s; using auto\n", error.c_str());
    bool cuda = false;
    MpsProbe probe;
    probe.pipe_directory = process_env("CUDA_MPS_PIPE_DIRECTORY");
    probe.exclusive_process = !devices_.empty();
    for (const AcceleratorDevice &d : devices_) {
        cuda = cuda || d.key.rfind("cuda:", 0) == 0;
        probe.exclusive_process = probe.exclusive_process && d.exclusive_process;
    }
    const ColocationChoice choice = choose_colocation(setting, cuda, probe);
    colocation_ = choice.model;
    // SA and CG do not read the model: nothing to say for them.
    if (!devices_.empty() && (algorithm_ == Algorithm::LeastWarps || algorithm_ == Algorithm::Exact))
        std::fprintf(stderr, "hetpu %s: co-location %s (%s)\n", algorithm_name(algorithm_),
                     colocation_name(colocation_), choice.reason.c_str());
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
        // Our StarPU memory limit bounds our own grants; the device's capacity is the largest
        // limit among the live processes and shrinks back when they exit.
        for (size_t d = 0; d < devices_.size(); ++d)
            ledger_index_[d] = ledger_add_device(ledger, devices_[d].key, devices_[d].spec, pid_);
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
    request.colocation = colocation_;
    request.allowed_devices = 0;
    for (size_t d = 0; d < devices_.size(); ++d)
        if (info.accelerators & (1u << d)) {
            const int l = ledger_index_[d];
            bytes[l] = info.needs.bytes + residency_.new_bytes(static_cast<unsigned>(d), info.handles);
            request.allowed_devices |= 1u << l;
        }
    // Time-sliced: no gap filling on a device an older waiting task could use (gpu_ledger.h).
    for (size_t d = 0; d < devices_.size(); ++d)
        if ((older_waiting_ & (1u << d)) && ledger_index_[d] >= 0)
            request.older_waiting_devices |= 1u << ledger_index_[d];
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
    // A task without gpu_needs has blocks == 0: the core takes it to fill the device.
    const std::string shape = info.needs.blocks == 0 ? std::string("unannotated: assumed to fill the device")
                                                     : std::to_string(info.needs.blocks) + " blocks of " +
                                                           std::to_string(info.needs.threads_per_block) + " threads";
    std::fprintf(stderr,
                 "hetpu %s: task %s needs %.1f MiB of device memory (%s), more than any device that can run it holds "
                 "(largest: %s, %s, %.1f MiB), and it has no CPU implementation: it can never run. Give it less data "
                 "(smaller blocks), raise the device's STARPU_LIMIT_*_MEM, or add a CPU implementation to its "
                 "codelet.\n",
                 algorithm_name(algorithm_), task_label(task).c_str(), need / kMiB, shape.c_str(),
                 largest ? largest->key.c_str() : "none", largest ? largest->spec.name : "-",
                 largest ? largest->spec.memory_bytes / kMiB : 0.0);
    std::fflush(stderr);
    // StarPU 1.3 gives a policy no way to fail a single task: a task has no error state for
    // starpu_task_wait to report, a task pushed once its dependencies end has no caller to
    // take push_task's return value, and a task that is never handed out keeps
    // starpu_task_wait_for_all waiting for ever. So the program's
    // other tasks cannot be let finish: stopping now, with the message above, is the only
    // alternative to a hang (docs/mgb.md, "A task that can never run").
    _exit(EXIT_FAILURE);
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
            const uint64_t theirs = reserved > mine ? reserved - mine : 0;
            // Only what they hold inside our own limit takes room from our StarPU: a device
            // larger than our limit has (capacity - limit) bytes we never use anyway.
            const uint64_t capacity = ledger.devices[l].capacity();
            const uint64_t limit = std::min(devices_[d].spec.memory_bytes, capacity);
            const uint64_t outside = capacity - limit;
            others[d] = theirs > outside ? theirs - outside : 0;
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

}  // namespace hetpu::mgb::detail
