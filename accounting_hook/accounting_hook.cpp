// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue of the accounting hook (see accounting_hook.h). The hot path is the two exec
// hooks: each touches only the calling worker's own slot (no lock, no allocation, no
// shared cache line), so accounting costs two clock reads per task.
#include "accounting_hook/accounting_hook.h"

#include <pwd.h>
#include <starpu.h>
#include <sys/resource.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "accounting_hook/core/energy_attribution.h"
#include "accounting_hook/core/ledger.h"
#include "accounting_hook/core/partition_config.h"
#include "accounting_hook/core/rank_merge.h"
#include "accounting_hook/core/run_charge.h"
#include "accounting_hook/core/slurm_allocation.h"
#include "accounting_hook/local_node.h"
#include "accounting_hook/shared_devices.h"
#include "common/finite_number.h"
#include "common/settings.h"
#include "runtime/mpi/mpi_gather.h"
#include "runtime/start/opencl_on_cpu.h"
#include "runtime/start/run_observer.h"
#include "perfmodels/energy/energy_source.h"

namespace hetpu::accounting {

namespace {

// ---- hot path --------------------------------------------------------------------------

// The hot path reads the time stamp counter (a few ns) rather than clock_gettime (about
// 20-25 ns, twice per task, which alone is ~1.5% of an eager task on a small machine).
// Ticks become seconds with the rate measured over the run itself (run_started ..
// run_finished against the steady clock), so an invariant TSC of any frequency works.
// Elsewhere the "ticks" are nanoseconds and that rate comes out as 1.
inline uint64_t ticks()
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
#endif
}

// One per worker, written only by that worker's thread. The in-flight ring exists because an
// asynchronous worker (OpenCL/CUDA pipelines) may start several tasks before the first ends.
struct alignas(64) WorkerSlot {
    static constexpr unsigned ring = 4;
    std::atomic<uint64_t> busy_ticks{0};   // relaxed: read after the workers stopped
    std::atomic<uint64_t> profiled_ns{0};  // tasks StarPU's profiling timed, in ns
    std::atomic<uint64_t> tasks{0};
    struct {
        const void *task;
        uint64_t start;
    } inflight[ring] = {};
    unsigned next = 0;
};

WorkerSlot g_slots[STARPU_NMAXWORKERS];
struct starpu_sched_policy g_wrapped;
// When StarPU was asked to start: the run is charged from there (initialisation holds the
// cores too).
std::chrono::steady_clock::time_point g_start_requested;
void (*g_inner_pre)(struct starpu_task *, unsigned) = nullptr;
void (*g_inner_post)(struct starpu_task *, unsigned) = nullptr;

// The calling worker's slot, looked up once per thread and run: starpu_worker_get_id() is a
// call plus a pthread_getspecific, twice per task otherwise. A new run bumps the generation
// so a thread never keeps a slot from an earlier StarPU session.
std::atomic<unsigned> g_run_generation{0};
struct CachedSlot {
    unsigned generation = ~0u;
    WorkerSlot *slot = nullptr;
};
thread_local CachedSlot t_cached;

inline WorkerSlot *my_slot()
{
    const unsigned generation = g_run_generation.load(std::memory_order_relaxed);
    if (t_cached.generation != generation) {
        const int w = starpu_worker_get_id();
        t_cached.slot = w >= 0 && w < STARPU_NMAXWORKERS ? &g_slots[w] : nullptr;
        t_cached.generation = generation;
    }
    return t_cached.slot;
}

void accounting_pre_exec_hook(struct starpu_task *task, unsigned sched_ctx_id)
{
    if (g_inner_pre)
        g_inner_pre(task, sched_ctx_id);
    WorkerSlot *slot = my_slot();
    if (!slot)
        return;
    WorkerSlot &s = *slot;
    auto &entry = s.inflight[s.next++ % WorkerSlot::ring];
    entry.task = task;
    entry.start = ticks();
}

double seconds_between(const struct timespec &a, const struct timespec &b)
{
    return static_cast<double>(b.tv_sec - a.tv_sec) + static_cast<double>(b.tv_nsec - a.tv_nsec) * 1e-9;
}

void accounting_post_exec_hook(struct starpu_task *task, unsigned sched_ctx_id)
{
    const uint64_t end = ticks();
    if (WorkerSlot *slot = my_slot()) {
        WorkerSlot &s = *slot;
        uint64_t own = 0;
        for (auto &entry : s.inflight) {
            if (entry.task == task) {
                own = end > entry.start ? end - entry.start : 0;
                entry.task = nullptr;
                break;
            }
        }
        // StarPU's profiling times the codelet alone when the program turned profiling on
        // (hetpu's divisible runner does); otherwise our own pre/post stamps, which add
        // StarPU's few microseconds of bookkeeping around the codelet (the callback runs
        // after post_exec_hook). Forcing profiling on would cost every task a calloc.
        const struct starpu_profiling_task_info *info = task->profiling_info;
        if (info && info->end_time.tv_sec != 0) {
            const double sec = seconds_between(info->start_time, info->end_time);
            const uint64_t ns = sec > 0 ? static_cast<uint64_t>(sec * 1e9) : 0;
            s.profiled_ns.store(s.profiled_ns.load(std::memory_order_relaxed) + ns, std::memory_order_relaxed);
        } else {
            s.busy_ticks.store(s.busy_ticks.load(std::memory_order_relaxed) + own, std::memory_order_relaxed);
        }
        s.tasks.store(s.tasks.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    if (g_inner_post)
        g_inner_post(task, sched_ctx_id);
}

// ---- run start / finish ------------------------------------------------------------------

// The run must not fail over its bill: a flag that is invalid here (start-up rejects one
// first, unless StarPU loaded the policy itself) reads as its default.
bool setting_flag(const char *name, bool fallback)
{
    try {
        return Settings().flag_or(name, fallback);
    } catch (const SettingError &) {
        return fallback;
    }
}

struct RunState {
    std::mutex mutex;
    bool active = false;
    bool atexit_registered = false;
    std::chrono::steady_clock::time_point start;
    std::chrono::steady_clock::time_point started;  // when run_started ran, with...
    uint64_t started_ticks = 0;                     // ...the tick counter then
    std::string policy;
    pid_t pid = 0;  // a forked child exiting must not charge its parent's run again
    int nworkers = 0;
    energy::WorkerType types[STARPU_NMAXWORKERS] = {};
    bool opencl_on_cpu = true;
    Partition partition;
    std::optional<double> grid_gco2e_per_kwh;
    std::unique_ptr<energy::EnergySelection> energy;
    energy::EnergySource *model = nullptr;
    std::vector<AcceleratorKey> accelerators;  // for the shares of shared devices
};

RunState &state()
{
    static RunState *s = new RunState;  // never destroyed: the atexit handler may run late
    return *s;
}

void warn(const std::string &msg) { std::fprintf(stderr, "hetpu accounting: %s\n", msg.c_str()); }

// The partition of the config file if one is given (a bad one is reported and the node is
// detected instead: the run must not fail over its bill), else this node.
void choose_partition(RunState &s, int gpus_driven)
{
    s.grid_gco2e_per_kwh.reset();
    const Settings settings;
    if (const std::optional<std::string> config = settings.text("HETPU_PARTITION_CONFIG")) {
        try {
            AccountingConfig cfg = load_accounting_config(*config);
            std::string name;
            if (const std::optional<std::string> p = settings.text("HETPU_PARTITION"))
                name = *p;
            else if (const char *sp = process_env("SLURM_JOB_PARTITION"); sp && *sp && cfg.find(sp))
                name = sp;
            s.partition = cfg.choose(name);
            s.grid_gco2e_per_kwh = cfg.grid_gco2e_per_kwh;
        } catch (const std::exception &e) {
            warn(std::string(e.what()) + " — charging against the detected node instead");
            s.partition = detect_local_node(gpus_driven, starpu_get_hwloc_topology());
        }
    } else {
        s.partition = detect_local_node(gpus_driven, starpu_get_hwloc_topology());
    }
    try {
        if (const std::optional<double> g = settings.number("HETPU_GRID_GCO2E_PER_KWH"))
            s.grid_gco2e_per_kwh = *g;
    } catch (const SettingError &e) {
        warn(std::string(e.what()) + "; ignored");
    }
}

void open_energy(RunState &s)
{
    const Partition &p = s.partition;
    const double gpu_tdp = p.gpu_tdp_w > 0 ? p.gpu_tdp_w : assumed_gpu_tdp_w;
    const double cpu_tdp = p.cpu_tdp_w > 0 ? p.cpu_tdp_w : assumed_cpu_core_w * p.cores_per_socket();
    energy::PowerModel model = energy::PowerModel::from_tdp(cpu_tdp, p.cores_per_socket(), gpu_tdp);
    try {
        s.energy =
            std::make_unique<energy::EnergySelection>(energy::open_energy_sources(model, nullptr, s.opencl_on_cpu));
    } catch (const std::exception &e) {
        warn(std::string(e.what()) + " — using the model");
        s.energy =
            std::make_unique<energy::EnergySelection>(energy::open_energy_sources(model, "model", s.opencl_on_cpu));
    }
    s.model = nullptr;
    for (auto &src : s.energy->sources)
        if (!src->measured())
            s.model = src.get();
    int counts[3] = {0, 0, 0};
    for (int w = 0; w < s.nworkers; ++w)
        counts[static_cast<int>(s.types[w])]++;
    for (auto &src : s.energy->sources)
        for (energy::WorkerType t : {energy::WorkerType::cpu, energy::WorkerType::opencl, energy::WorkerType::cuda})
            src->set_worker_count(t, counts[static_cast<int>(t)]);
}

std::string user_name()
{
    if (const char *u = process_env("USER"); u && *u)
        return u;
    if (struct passwd *pw = getpwuid(getuid()))
        return pw->pw_name;
    return std::to_string(getuid());
}

std::string host_name()
{
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0)
        return "unknown";
    return buf;
}

double peak_rss_gib()
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return static_cast<double>(ru.ru_maxrss) / (1024.0 * 1024.0);  // KiB -> GiB
}

void finish_at_exit() { run_finished(); }

void finish_locked(RunState &s)
{
    const auto now = std::chrono::steady_clock::now();
    const uint64_t now_ticks = ticks();
    const double wall_s = std::chrono::duration<double>(now - s.start).count();
    const double calibration_s = std::chrono::duration<double>(now - s.started).count();
    const double s_per_tick =
        now_ticks > s.started_ticks ? calibration_s / static_cast<double>(now_ticks - s.started_ticks) : 0;
    std::vector<BusyByType> busy;
    int cores_in_use = 0, gpus_in_use = 0;
    for (energy::WorkerType t : {energy::WorkerType::cpu, energy::WorkerType::opencl, energy::WorkerType::cuda}) {
        BusyByType b;
        b.type = t;
        for (int w = 0; w < s.nworkers; ++w) {
            if (s.types[w] != t)
                continue;
            b.workers++;
            b.tasks += static_cast<long long>(g_slots[w].tasks.load(std::memory_order_relaxed));
            b.busy_s += static_cast<double>(g_slots[w].busy_ticks.load(std::memory_order_relaxed)) * s_per_tick +
                        static_cast<double>(g_slots[w].profiled_ns.load(std::memory_order_relaxed)) * 1e-9;
        }
        if (b.workers == 0)
            continue;
        // Every StarPU worker is a thread pinned to a core, the driver threads of
        // accelerators included; GPUs are the CUDA devices and OpenCL devices that are not CPUs.
        cores_in_use += b.workers;
        if (energy::device_of(t, s.opencl_on_cpu) == energy::Device::gpu)
            gpus_in_use += b.workers;
        busy.push_back(b);
    }
    RunInputs in;
    in.user = user_name();
    in.host = host_name();
    in.app = program_invocation_short_name;
    in.policy = s.policy;
    in.partition = s.partition;
    in.wall_s = wall_s;
    in.cores_in_use = cores_in_use;
    in.gpus_in_use = gpus_in_use;
    in.peak_rss_gib = peak_rss_gib();
    in.grid_gco2e_per_kwh = s.grid_gco2e_per_kwh;
    try {
        in.slurm = read_slurm_allocation(process_env);
    } catch (const std::exception &e) {
        warn(std::string(e.what()) + " — charging what the process used instead");
    }
    in.workers = attribute_energy(busy, s.energy->for_device(energy::Device::cpu),
                                  s.energy->for_device(energy::Device::gpu), s.model, s.opencl_on_cpu);
    apply_device_shares(in, s.accelerators, s.energy->for_device(energy::Device::gpu), s.opencl_on_cpu, warn);
    JobRecord job = charge_run(in);

    // A multi-rank (MPI) job is one job: rank 0 merges every rank's charge into one ledger
    // row (collective: every rank gets here from hetpu_shutdown, before MPI is finalised);
    // the other ranks record nothing and stay quiet.
    if (mpi_size() > 1) {
        std::vector<std::string> wires = mpi_gather_to_root(to_wire(job));
        if (mpi_rank() != 0)
            return;
        std::vector<JobRecord> records;
        std::set<std::string> hosts;
        for (const auto &w : wires) {
            records.push_back(from_wire(w));
            hosts.insert(records.back().host);
        }
        job = merge_rank_records(records, static_cast<int>(hosts.size()));
    }

    std::string note;
    bool recorded = false;
    const std::string path = default_ledger_path(process_env);
    try {
        Ledger ledger(path);
        job.id = ledger.record(job);
        note = "recorded as job " + std::to_string(job.id) + " in " + path;
        recorded = true;
    } catch (const std::exception &e) {
        note = std::string("NOT recorded: ") + e.what();
    }
    std::fflush(stdout);  // the program's own output first, when both go to one terminal or file
    if (!setting_flag("HETPU_ACCOUNTING_QUIET", false))
        std::fputs(format_summary(job, s.partition, note).c_str(), stderr);
    else if (!recorded)
        warn("the charge of this run (" + std::to_string(job.su) + " SU) was " + note);
}

}  // namespace

bool accounting_enabled() { return setting_flag("HETPU_ACCOUNTING", true); }

struct starpu_sched_policy *wrap_policy(struct starpu_sched_policy *resolved)
{
    if (!resolved)
        return resolved;
    // StarPU copies the struct it is given, so one static copy serves every run; the inner
    // hooks are read from globals because StarPU's hook signature carries no context.
    g_start_requested = std::chrono::steady_clock::now();
    g_wrapped = *resolved;
    g_inner_pre = resolved->pre_exec_hook;
    g_inner_post = resolved->post_exec_hook;
    g_wrapped.pre_exec_hook = accounting_pre_exec_hook;
    g_wrapped.post_exec_hook = accounting_post_exec_hook;
    return &g_wrapped;
}

void run_started(const char *policy_name)
{
    RunState &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    try {
        s.active = false;
        s.start = g_start_requested;
        s.policy = policy_name ? policy_name : "?";
        s.pid = getpid();
        // HETPU_ACCOUNTING_OPENCL_AS_GPU: PoCL's devices stand in for GPUs (tests, demos).
        s.opencl_on_cpu = opencl_workers_run_on_cpu() && !setting_flag("HETPU_ACCOUNTING_OPENCL_AS_GPU", false);
        s.accelerators = run_accelerators(s.opencl_on_cpu);
        s.nworkers = std::min<int>(static_cast<int>(starpu_worker_get_count()), STARPU_NMAXWORKERS);
        int gpus = 0;
        for (int w = 0; w < s.nworkers; ++w) {
            switch (starpu_worker_get_type(w)) {
            case STARPU_CUDA_WORKER: s.types[w] = energy::WorkerType::cuda; break;
            case STARPU_OPENCL_WORKER: s.types[w] = energy::WorkerType::opencl; break;
            default: s.types[w] = energy::WorkerType::cpu; break;
            }
            if (energy::device_of(s.types[w], s.opencl_on_cpu) == energy::Device::gpu)
                gpus++;
            g_slots[w].busy_ticks.store(0, std::memory_order_relaxed);
            g_slots[w].profiled_ns.store(0, std::memory_order_relaxed);
            g_slots[w].tasks.store(0, std::memory_order_relaxed);
            for (auto &e : g_slots[w].inflight)
                e.task = nullptr;
        }
        choose_partition(s, gpus);
        open_energy(s);
        read_shared_device_energy(s.accelerators, s.energy->for_device(energy::Device::gpu));
        g_run_generation.fetch_add(1, std::memory_order_relaxed);
        s.started = std::chrono::steady_clock::now();
        s.started_ticks = ticks();
        s.active = true;
        if (!s.atexit_registered) {
            std::atexit(finish_at_exit);
            s.atexit_registered = true;
        }
    } catch (const std::exception &e) {
        warn(std::string(e.what()) + " — this run is not charged");
    }
}

void run_finished()
{
    RunState &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.active || s.pid != getpid())
        return;
    s.active = false;
    try {
        finish_locked(s);
    } catch (const std::exception &e) {
        warn(std::string(e.what()) + " — this run is not charged");
    }
    stop_reading_shared_device_energy();  // before its source goes
    s.energy.reset();
    s.model = nullptr;
}

void run_abandoned()
{
    RunState &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.active = false;
    stop_reading_shared_device_energy();
    s.energy.reset();
    s.model = nullptr;
}

}  // namespace hetpu::accounting

namespace {

// The runtime calls the hook through its run observer (runtime/start/run_observer.h).
const hetpu::RunObserver accounting_observer = {&hetpu::accounting::accounting_enabled, &hetpu::accounting::wrap_policy,
                                                &hetpu::accounting::run_started, &hetpu::accounting::run_finished,
                                                &hetpu::accounting::run_abandoned};

struct RegisterAccounting {
    RegisterAccounting() { hetpu::set_run_observer(&accounting_observer); }
} register_accounting;

}  // namespace
