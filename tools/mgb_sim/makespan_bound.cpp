// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/mgb_sim/makespan_bound.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <queue>
#include <set>

#include "sched_policies/mgb/core/task_needs.h"

namespace hetpu::mgb_sim {

namespace {

struct JobTimes {
    double whole_s = 0;     // cpu + kernels + host, standalone
    double gpu_s = 0;       // from grant to release, standalone: memory held that long
    double sm_share_s = 0;  // least over its devices of sum(share * seconds) of its kernels
    uint64_t bytes = 0;
    uint64_t need_capacity = 0;  // the smallest capacity among the devices that fit it
    bool over_half = true;       // more than half the memory of every device that fits it
    double cpu_s = 0;            // host work before its GPU part
    bool fits = false;
};

JobTimes times_of(const JobSpec &job, const MgbScenario &s, double cpu_factor, double gpu_factor)
{
    JobTimes t;
    t.bytes = job.memory_bytes;
    for (const KernelSpec &k : job.kernels)
        t.gpu_s += double(k.repeat) * (k.seconds + k.host_seconds) * gpu_factor;
    t.cpu_s = job.cpu_seconds * cpu_factor;
    t.whole_s = t.cpu_s + t.gpu_s;
    bool first = true;
    for (size_t d = 0; d < s.gpus.size(); ++d) {
        const mgb::GpuSpec &gpu = s.gpus[d];
        // A job pinned elsewhere, or too large, never runs here: a job that fits none of
        // its allowed devices is rejected by every policy and counts in no term.
        if (!(job.allowed_devices >> d & 1u) || job.memory_bytes > gpu.memory_bytes)
            continue;
        double share_s = 0;
        bool runnable = true;
        for (const KernelSpec &k : job.kernels) {
            mgb::TaskNeeds n;
            n.bytes = job.memory_bytes;
            n.blocks = k.blocks;
            n.threads_per_block = k.threads_per_block;
            n.shared_mem_per_block = k.shared_mem_per_block;
            const mgb::Footprint fp = mgb::footprint_on(n, gpu);
            runnable = runnable && fp.runnable;
            const double share = std::min(1.0, double(fp.warps()) / double(gpu.max_warps()));
            share_s += share * double(k.repeat) * k.seconds * gpu_factor;
        }
        if (!runnable)
            continue;
        if (first || share_s < t.sm_share_s)
            t.sm_share_s = share_s;
        if (first || gpu.memory_bytes < t.need_capacity)
            t.need_capacity = gpu.memory_bytes;
        t.over_half = t.over_half && 2 * job.memory_bytes > gpu.memory_bytes;
        first = false;
        t.fits = true;
    }
    return t;
}

}  // namespace

BoundTerms makespan_lower_bound(const MgbScenario &s, unsigned workers, const std::vector<double> &cpu_factor,
                                const std::vector<double> &gpu_factor)
{
    BoundTerms b;
    std::vector<JobTimes> jobs;
    std::vector<double> worker_time;  // per job in queue order: how long it holds its worker at least
    std::vector<char> counted;        // per job: fits some device
    for (size_t j = 0; j < s.jobs.size(); ++j) {
        const double cpu = cpu_factor.empty() ? 1.0 : cpu_factor[j];
        const JobTimes t = times_of(s.jobs[j], s, cpu, gpu_factor.empty() ? 1.0 : gpu_factor[j]);
        // A job that fits nowhere still runs its host work before it is turned away.
        worker_time.push_back(t.fits ? t.whole_s : s.jobs[j].cpu_seconds * cpu);
        counted.push_back(t.fits);
        if (!t.fits)
            continue;
        jobs.push_back(t);
        b.longest_s = std::max(b.longest_s, s.jobs[j].arrive_s + t.whole_s);
    }
    // Workers with release times: the jobs arriving at r or later hold workers for their whole
    // times after r (jobs are listed in arrival order, so these are suffixes).
    if (workers > 0) {
        double after = 0;
        for (size_t j = s.jobs.size(); j-- > 0;) {
            if (counted[j])
                after += worker_time[j];
            if (j == 0 || s.jobs[j - 1].arrive_s < s.jobs[j].arrive_s)
                b.workers_s = std::max(b.workers_s, s.jobs[j].arrive_s + after / workers);
        }
    }
    // Queue order: job k is taken only when one of the W workers is free, that is once
    // k - W + 1 of the jobs before it have ended; each took at least its own time from t = 0.
    // The (k - W + 1)-th smallest of the times before job k is kept with two heaps (the
    // smallest ones in a max-heap, the rest in a min-heap): O(n log n) for n jobs.
    if (workers > 0) {
        std::priority_queue<double> low;
        std::priority_queue<double, std::vector<double>, std::greater<double>> high;
        for (size_t k = 0; k < worker_time.size(); ++k) {
            // Job k starts once it has arrived and k - W + 1 jobs before it have ended; job j
            // ends no sooner than arrive_j + its own time.
            double start = s.jobs[k].arrive_s;
            if (k >= workers) {
                const size_t rank = k - workers + 1;
                while (low.size() < rank) {
                    low.push(high.top());
                    high.pop();
                }
                start = std::max(start, low.top());
            }
            if (counted[k])
                b.queue_s = std::max(b.queue_s, start + worker_time[k]);
            const double end = s.jobs[k].arrive_s + worker_time[k];
            if (!low.empty() && end < low.top()) {
                low.push(end);
                high.push(low.top());
                low.pop();
            } else {
                high.push(end);
            }
        }
    }
    b.jobs_counted = unsigned(jobs.size());

    // Capacity levels: a job whose smallest fitting device has capacity >= L fits no
    // device below L (a device fits it exactly when its capacity is large enough and its
    // SMs can run a block; the latter is the same on devices of one kind, and a level
    // test that ignores it only counts fewer jobs, which keeps the bound valid).
    std::set<uint64_t> levels;
    for (const mgb::GpuSpec &gpu : s.gpus)
        levels.insert(gpu.memory_bytes);
    for (uint64_t level : levels) {
        double devices = 0, capacity = 0;
        for (const mgb::GpuSpec &gpu : s.gpus)
            if (gpu.memory_bytes >= level) {
                devices += 1;
                capacity += double(gpu.memory_bytes);
            }
        double share_s = 0, byte_s = 0, exclusive_s = 0, first_cpu_s = -1;
        for (const JobTimes &t : jobs)
            if (t.need_capacity >= level) {
                share_s += t.sm_share_s;
                byte_s += double(t.bytes) * t.gpu_s;
                if (t.over_half) {
                    exclusive_s += t.gpu_s;
                    first_cpu_s = first_cpu_s < 0 ? t.cpu_s : std::min(first_cpu_s, t.cpu_s);
                }
            }
        b.sm_s = std::max(b.sm_s, share_s / devices);
        b.memory_s = std::max(b.memory_s, byte_s / capacity);
        if (first_cpu_s >= 0)
            b.exclusive_s = std::max(b.exclusive_s, first_cpu_s + exclusive_s / devices);
    }

    b.bound_s = b.longest_s;
    b.binding = "longest";
    for (auto [value, name] : {std::pair<double, const char *>{b.queue_s, "queue"},
                               {b.exclusive_s, "exclusive"},
                               {b.sm_s, "sm"},
                               {b.memory_s, "memory"},
                               {b.workers_s, "workers"}})
        if (value > b.bound_s) {
            b.bound_s = value;
            b.binding = name;
        }
    return b;
}

}  // namespace hetpu::mgb_sim
