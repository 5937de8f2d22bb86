// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/mgb_sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>

#include "sched_policies/mgb/core/gpu_ledger.h"
#include "sched_policies/mgb/core/task_needs.h"
#include "sched_policies/mgb/core/wait_queue.h"
#include "tools/mgb_sim/makespan_bound.h"

namespace hetpu::mgb_sim {

namespace {

using mgb::Algorithm;
using mgb::Ledger;
using mgb::PlaceRequest;
using mgb::PlaceStatus;
using mgb::TaskNeeds;

enum class Phase { Queued, Cpu, Waiting, Kernel, Host, Done };

struct Live {
    Phase phase = Phase::Queued;
    double phase_end = 0;  // Cpu, Host
    int device = -1;
    uint64_t grant = 0;
    size_t kernel = 0;      // index into JobSpec::kernels
    uint32_t launch = 0;    // within that kernel's repeat
    double standalone = 0;  // this launch's standalone seconds
    double remaining = 0;   // standalone seconds still to run
    double launch_start = 0;
    uint64_t warps = 0;  // this launch's resident footprint
    double rate = 0;     // recomputed before every event
    double asked_s = 0;
    double cpu_factor = 1, gpu_factor = 1;
    double slowdown_sum = 0;  // sum of (elapsed / standalone - 1) over its launches
};

TaskNeeds kernel_needs(const JobSpec &job, const KernelSpec &k)
{
    TaskNeeds n;
    n.bytes = job.memory_bytes;
    n.blocks = k.blocks;
    n.threads_per_block = k.threads_per_block;
    n.shared_mem_per_block = k.shared_mem_per_block;
    return n;
}

// What the job tells the policy (MGB's task_begin): its memory, and the launch shape of the
// kernel with the largest resident footprint on the node's first device. The Ledger holds
// one compute footprint per grant, for the job's whole GPU part: the largest one is what
// the job can occupy at any moment. Its busy share is its kernels' standalone time over
// that plus its host phases: the share of the time it holds the device that its kernels run
// (what the time-sliced placement rule reads; a profile of the job gives it).
TaskNeeds job_needs(const JobSpec &job, const mgb::GpuSpec &spec)
{
    double kernel_s = 0, host_s = 0;
    for (const KernelSpec &k : job.kernels) {
        kernel_s += k.seconds * k.repeat;
        host_s += k.host_seconds * k.repeat;
    }
    const uint32_t busy =
        uint32_t(std::clamp(std::lround(1000.0 * kernel_s / std::max(kernel_s + host_s, 1e-300)), 1l, 1000l));
    TaskNeeds best = kernel_needs(job, job.kernels.front());
    uint64_t best_warps = mgb::footprint_on(best, spec).warps();
    for (const KernelSpec &k : job.kernels) {
        const TaskNeeds n = kernel_needs(job, k);
        const uint64_t w = mgb::footprint_on(n, spec).warps();
        if (w > best_warps) {
            best = n;
            best_warps = w;
        }
    }
    best.busy_permille = busy;
    return best;
}

// The devices on which every kernel of the job can run (its blocks fit an SM's threads,
// warps and shared memory), as a device mask.
uint32_t runnable_devices(const JobSpec &job, const MgbScenario &s)
{
    uint32_t mask = 0;
    for (size_t d = 0; d < s.gpus.size(); ++d) {
        bool all = true;
        for (const KernelSpec &k : job.kernels)
            all = all && mgb::footprint_on(kernel_needs(job, k), s.gpus[d]).runnable;
        if (all)
            mask |= 1u << d;
    }
    return mask;
}

// A factor in [1 - spread, 1 + spread] from the top 53 bits of the generator: the same on
// every platform and standard library (std::uniform_real_distribution is not).
double draw_factor(std::mt19937_64 &rng, double spread)
{
    const double u = double(rng() >> 11) * (1.0 / 9007199254740992.0);
    return 1.0 + spread * (2.0 * u - 1.0);
}

class Simulation {
public:
    Simulation(const MgbScenario &s, const SimOptions &o)
        : s_(s), o_(o), ledger_(std::make_unique<Ledger>()), live_(s.jobs.size())
    {
        mgb::ledger_init(*ledger_);
        for (size_t d = 0; d < s.gpus.size(); ++d)
            mgb::ledger_add_device(*ledger_, "sim:" + std::to_string(d), s.gpus[d]);
        allocated_.assign(s.gpus.size(), 0);
        result_.gpus.resize(s.gpus.size());
        for (size_t d = 0; d < s.gpus.size(); ++d)
            result_.gpus[d].name = s.gpus[d].name;
        result_.job_records.resize(s.jobs.size());
        draw_job_factors(s, o.seed, cpu_factors_, gpu_factors_);
        for (size_t j = 0; j < s.jobs.size(); ++j) {
            result_.job_records[j].name = s.jobs[j].name;
            live_[j].cpu_factor = cpu_factors_[j];
            live_[j].gpu_factor = gpu_factors_[j];
            needs_.push_back(job_needs(s.jobs[j], s.gpus.front()));
            runnable_.push_back(runnable_devices(s.jobs[j], s));
        }
        colocation_ = o.colocation ? *o.colocation : s.colocation;
        workers_ = o.workers ? o.workers : s.workers;
        const unsigned ndev = unsigned(s.gpus.size());
        cg_ratio_ = o.cg_ratio ? o.cg_ratio : (workers_ + ndev - 1) / ndev;
        switch (o.policy) {
        case Policy::Sa: algorithm_ = Algorithm::SingleAssignment; break;
        case Policy::Cg: algorithm_ = Algorithm::CoreToGpu; break;
        case Policy::Mgb: algorithm_ = Algorithm::LeastWarps; break;
        case Policy::MgbExact: algorithm_ = Algorithm::Exact; break;
        // schedGPU (Reaño et al., as the MGB paper describes it): memory is the only criterion
        // and every job goes to one device. That is Alg. 3's memory test with device 0 the
        // only one allowed: the Ledger does it as is.
        case Policy::SchedGpu:
            algorithm_ = Algorithm::LeastWarps;
            allowed_ = 1u;
            schedgpu_ = true;
            break;
        }
    }

    SimResult run()
    {
        idle_workers_ = workers_;
        start_arrived();
        for (;;) {
            compute_rates();
            size_t who = SIZE_MAX;
            double when = std::numeric_limits<double>::infinity();
            for (size_t j : active_) {
                const Live &l = live_[j];
                double t;
                if (l.phase == Phase::Cpu || l.phase == Phase::Host)
                    t = l.phase_end;
                else if (l.phase == Phase::Kernel)
                    t = now_ + l.remaining / l.rate;
                else
                    continue;  // waiting for a device: no timed event of its own
                // Ties go to the job taken first (lowest index): deterministic.
                if (t < when || (t == when && j < who)) {
                    when = t;
                    who = j;
                }
            }
            // A job arriving while a worker is idle is an event of its own; a job event at the
            // same instant goes first (deterministic).
            const bool arrival_waits = idle_workers_ > 0 && next_job_ < s_.jobs.size();
            if (arrival_waits && s_.jobs[next_job_].arrive_s < when) {
                advance_to(std::max(s_.jobs[next_job_].arrive_s, now_));
                ++result_.events;
                start_arrived();
                continue;
            }
            if (who == SIZE_MAX)
                break;
            advance_to(std::max(when, now_));
            ++result_.events;
            handle(who);
        }
        // Nothing can run any more. Jobs still waiting would wait forever: that cannot happen
        // (a device that could ever hold a job is empty now), but report it rather than hang.
        for (uint64_t id : queue_.ids())
            end_job(size_t(id), Outcome::Rejected);
        return finish();
    }

private:
    enum class Outcome { Completed, Crashed, Rejected };

    // A worker is free: it takes the next job if that job has arrived, else waits for it.
    void worker_freed()
    {
        ++idle_workers_;
        start_arrived();
    }

    void start_arrived()
    {
        while (idle_workers_ > 0 && next_job_ < s_.jobs.size() && s_.jobs[next_job_].arrive_s <= now_) {
            --idle_workers_;
            start_next_job();
        }
    }

    void start_next_job()
    {
        const size_t j = next_job_++;
        Live &l = live_[j];
        l.phase = Phase::Cpu;
        l.phase_end = now_ + s_.jobs[j].cpu_seconds * l.cpu_factor;
        result_.job_records[j].start_s = now_;
        active_.push_back(j);
    }

    void compute_rates()
    {
        std::vector<uint64_t> warps(s_.gpus.size(), 0);
        std::vector<unsigned> kernels(s_.gpus.size(), 0);
        for (size_t j : active_)
            if (live_[j].phase == Phase::Kernel) {
                warps[size_t(live_[j].device)] += live_[j].warps;
                ++kernels[size_t(live_[j].device)];
            }
        for (size_t j : active_) {
            Live &l = live_[j];
            if (l.phase != Phase::Kernel)
                continue;
            if (colocation_ == Colocation::TimeSliced) {
                // Without MPS the contexts of different processes take turns on the whole
                // device: each of n kernels progresses 1/n of the time, whatever its size.
                l.rate = 1.0 / double(kernels[size_t(l.device)]);
                continue;
            }
            const double cap = double(s_.gpus[size_t(l.device)].max_warps());
            const double all = double(warps[size_t(l.device)]);
            const double share = all > cap ? cap / all : 1.0;
            const double others = std::min(1.0, (all - double(l.warps)) / cap);
            l.rate = share / (1.0 + s_.interference * others);
        }
    }

    void advance_to(double t)
    {
        const double dt = t - now_;
        std::vector<char> busy(s_.gpus.size(), 0);
        for (size_t j : active_) {
            Live &l = live_[j];
            if (l.phase != Phase::Kernel)
                continue;
            l.remaining = std::max(0.0, l.remaining - l.rate * dt);
            busy[size_t(l.device)] = 1;
        }
        for (size_t d = 0; d < busy.size(); ++d)
            if (busy[d])
                result_.gpus[d].busy_s += dt;
        now_ = t;
    }

    void handle(size_t j)
    {
        Live &l = live_[j];
        switch (l.phase) {
        case Phase::Cpu:
            l.phase = Phase::Waiting;
            l.asked_s = now_;
            queue_.push(j);
            drain();
            break;
        case Phase::Kernel:
            l.remaining = 0;
            l.slowdown_sum += (now_ - l.launch_start) / l.standalone - 1.0;
            ++result_.job_records[j].kernels;
            if (const double host = s_.jobs[j].kernels[l.kernel].host_seconds * l.gpu_factor; host > 0) {
                l.phase = Phase::Host;
                l.phase_end = now_ + host;
            } else {
                next_launch(j);
            }
            break;
        case Phase::Host: next_launch(j); break;
        default: break;  // Queued, Waiting and Done jobs have no timed event
        }
    }

    // Tries every waiting job (the core's backfilling and aging decide the order). A crash
    // frees its device at once, so the queue is tried again until nothing changes.
    void drain()
    {
        bool again = true;
        while (again) {
            again = false;
            freed_workers_ = 0;
            older_waiting_ = 0;
            queue_.drain([&](uint64_t id) { return try_place(size_t(id), again); });
            for (unsigned w = 0; w < freed_workers_; ++w)
                worker_freed();
        }
    }

    bool try_place(size_t j, bool &released)
    {
        PlaceRequest req;
        req.needs = needs_[j];
        // Only devices that can run every kernel of the job: the policy is told one kernel's
        // shape (the largest), and another may need more shared memory or threads per block
        // than some device has; placing it there would launch a kernel that cannot run.
        req.allowed_devices = allowed_ & s_.jobs[j].allowed_devices & runnable_[j];
        req.pid = int32_t(j + 1);
        req.cg_ratio = cg_ratio_;
        // mgb and mgb-exact place by the device's co-location model; schedGPU looks at memory only.
        req.colocation = schedgpu_ ? Colocation::Mps : colocation_;
        req.older_waiting_devices = older_waiting_;
        const mgb::PlaceResult r = mgb::ledger_place(*ledger_, algorithm_, req);
        if (r.status == PlaceStatus::WaitForResources) {
            // The devices it could ever run on: a younger job may not share them (gpu_ledger.h).
            for (unsigned d = 0; d < s_.gpus.size() && d < 32; ++d)
                if (mgb::could_ever_fit(*ledger_, int(d), req))
                    older_waiting_ |= 1u << d;
            return false;
        }
        if (r.status == PlaceStatus::NeverFits) {
            end_job(j, Outcome::Rejected);
            ++freed_workers_;
            return true;  // out of the queue
        }
        Live &l = live_[j];
        JobRecord &rec = result_.job_records[j];
        GpuRecord &g = result_.gpus[size_t(r.device)];
        l.device = r.device;
        l.grant = r.grant;
        rec.device = r.device;
        rec.granted_s = now_;
        rec.gpu_wait_s = now_ - l.asked_s;
        ++g.jobs;
        const mgb::DeviceState &dev = ledger_->devices[r.device];
        g.peak_reserved_bytes = std::max(g.peak_reserved_bytes, dev.reserved_bytes);
        g.peak_jobs = std::max(g.peak_jobs, dev.tasks);
        const uint64_t bytes = s_.jobs[j].memory_bytes;
        if (allocated_[size_t(r.device)] + bytes > s_.gpus[size_t(r.device)].memory_bytes) {
            // cudaMalloc fails: the process ends, its device share with it.
            mgb::ledger_release(*ledger_, l.grant);
            l.grant = 0;
            end_job(j, Outcome::Crashed);
            ++freed_workers_;
            released = true;
            return true;
        }
        allocated_[size_t(r.device)] += bytes;
        g.peak_allocated_bytes = std::max(g.peak_allocated_bytes, allocated_[size_t(r.device)]);
        l.kernel = 0;
        l.launch = 0;
        start_launch(j);
        return true;
    }

    void start_launch(size_t j)
    {
        Live &l = live_[j];
        const JobSpec &job = s_.jobs[j];
        const KernelSpec &k = job.kernels[l.kernel];
        l.phase = Phase::Kernel;
        l.standalone = k.seconds * l.gpu_factor;
        l.remaining = l.standalone;
        l.launch_start = now_;
        l.warps = mgb::footprint_on(kernel_needs(job, k), s_.gpus[size_t(l.device)]).warps();
    }

    void next_launch(size_t j)
    {
        Live &l = live_[j];
        const JobSpec &job = s_.jobs[j];
        if (++l.launch >= job.kernels[l.kernel].repeat) {
            l.launch = 0;
            ++l.kernel;
        }
        if (l.kernel < job.kernels.size()) {
            start_launch(j);
            return;
        }
        mgb::ledger_release(*ledger_, l.grant);
        allocated_[size_t(l.device)] -= job.memory_bytes;
        end_job(j, Outcome::Completed);
        worker_freed();
        drain();
    }

    void end_job(size_t j, Outcome outcome)
    {
        Live &l = live_[j];
        JobRecord &rec = result_.job_records[j];
        l.phase = Phase::Done;
        rec.end_s = now_;
        rec.completed = outcome == Outcome::Completed;
        rec.crashed = outcome == Outcome::Crashed;
        rec.rejected = outcome == Outcome::Rejected;
        if (rec.kernels > 0)
            rec.kernel_slowdown_pct = 100.0 * l.slowdown_sum / rec.kernels;
        active_.erase(std::find(active_.begin(), active_.end(), j));
    }

    SimResult finish()
    {
        SimResult &r = result_;
        r.policy = policy_name(o_.policy);
        r.workers = workers_;
        r.cg_ratio = o_.policy == Policy::Cg ? cg_ratio_ : 0;
        r.seed = o_.seed;
        r.jobs = unsigned(s_.jobs.size());
        double turnaround = 0, wait = 0, slowdown = 0;
        unsigned granted = 0, launches = 0;
        for (size_t j = 0; j < s_.jobs.size(); ++j) {
            const JobRecord &rec = r.job_records[j];
            r.makespan_s = std::max(r.makespan_s, rec.end_s);
            r.jobs_completed += rec.completed;
            r.jobs_crashed += rec.crashed;
            r.jobs_rejected += rec.rejected;
            if (rec.completed) {
                turnaround += rec.end_s - s_.jobs[j].arrive_s;
                slowdown += live_[j].slowdown_sum;
                launches += rec.kernels;
            }
            if (rec.granted_s >= 0) {
                wait += rec.gpu_wait_s;
                ++granted;
            }
        }
        r.mean_turnaround_s = r.jobs_completed ? turnaround / r.jobs_completed : 0;
        r.mean_gpu_wait_s = granted ? wait / granted : 0;
        r.mean_kernel_slowdown_pct = launches ? 100.0 * slowdown / launches : 0;
        r.throughput_jobs_per_hour = r.makespan_s > 0 ? 3600.0 * r.jobs_completed / r.makespan_s : 0;
        r.colocation = colocation_name(colocation_);
        r.bound = makespan_lower_bound(s_, workers_, colocation_, cpu_factors_, gpu_factors_);
        r.lower_bound_s = r.bound.bound_s;
        return r;
    }

    const MgbScenario &s_;
    const SimOptions &o_;
    std::unique_ptr<Ledger> ledger_;  // ~0.4 MB: not on the stack
    std::vector<Live> live_;
    std::vector<TaskNeeds> needs_;
    std::vector<uint32_t> runnable_;  // per job: the devices that can run all its kernels
    std::vector<double> cpu_factors_, gpu_factors_;
    Colocation colocation_ = Colocation::Mps;
    std::vector<uint64_t> allocated_;
    std::vector<size_t> active_;  // jobs held by a worker, in the order they were taken
    mgb::WaitQueue queue_;
    SimResult result_;
    Algorithm algorithm_ = Algorithm::LeastWarps;
    uint32_t allowed_ = ~0u;
    bool schedgpu_ = false;
    uint32_t older_waiting_ = 0;  // during a drain: devices the jobs it passed over could run on
    unsigned workers_ = 0, cg_ratio_ = 1, freed_workers_ = 0, idle_workers_ = 0;
    size_t next_job_ = 0;
    double now_ = 0;
};

}  // namespace

void draw_job_factors(const MgbScenario &scenario, uint64_t seed, std::vector<double> &cpu, std::vector<double> &gpu)
{
    // Drawn in job order before anything runs, so every policy (and the bound) sees the
    // same jobs.
    std::mt19937_64 rng(seed);
    cpu.resize(scenario.jobs.size());
    gpu.resize(scenario.jobs.size());
    for (size_t j = 0; j < scenario.jobs.size(); ++j) {
        cpu[j] = draw_factor(rng, scenario.noise);
        gpu[j] = draw_factor(rng, scenario.noise);
    }
}

const char *policy_name(Policy policy)
{
    switch (policy) {
    case Policy::Sa: return "sa";
    case Policy::Cg: return "cg";
    case Policy::Mgb: return "mgb";
    case Policy::MgbExact: return "mgb-exact";
    case Policy::SchedGpu: return "schedgpu";
    }
    return "unknown";
}

bool parse_policy(const std::string &name, Policy &out)
{
    for (Policy p : {Policy::Sa, Policy::Cg, Policy::Mgb, Policy::MgbExact, Policy::SchedGpu})
        if (name == policy_name(p)) {
            out = p;
            return true;
        }
    return false;
}

SimResult simulate(const MgbScenario &scenario, const SimOptions &options)
{
    Simulation sim(scenario, options);
    return sim.run();
}

}  // namespace hetpu::mgb_sim
