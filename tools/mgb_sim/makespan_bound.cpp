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
    double cpu_s = 0;            // host work before its GPU part
    bool fits = false;
};

JobTimes times_of(const JobSpec &job, const MgbScenario &s, Colocation colocation, double cpu_factor, double gpu_factor)
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
            // Time-sliced, a kernel has the whole device while it runs, whatever its warps.
            const double share = colocation == Colocation::TimeSliced
                                     ? 1.0
                                     : std::min(1.0, double(fp.warps()) / double(gpu.max_warps()));
            share_s += share * double(k.repeat) * k.seconds * gpu_factor;
        }
        if (!runnable)
            continue;
        if (first || share_s < t.sm_share_s)
            t.sm_share_s = share_s;
        if (first || gpu.memory_bytes < t.need_capacity)
            t.need_capacity = gpu.memory_bytes;
        first = false;
        t.fits = true;
    }
    return t;
}

// The exclusive term at one capacity level (makespan_bound.h): `jobs` are the level's, `capacity`
// the largest device's memory there, `devices` how many devices it has. Two jobs conflict when
// their bytes together exceed `capacity`: a threshold graph, whose cliques are some jobs over
// half the capacity (they all conflict) and at most one job below half that conflicts with the
// smallest of them (two jobs below half fit together). For each number p of the largest such
// jobs the heaviest job below half that still conflicts joins them; any clique gives a valid
// term, so taking the heaviest rather than searching for the best pairing keeps it O(n log n).
double exclusive_term(std::vector<const JobTimes *> jobs, double capacity, double devices)
{
    std::vector<const JobTimes *> big, small;
    for (const JobTimes *t : jobs)
        (2.0 * double(t->bytes) > capacity ? big : small).push_back(t);
    if (big.empty())
        return 0;
    std::sort(big.begin(), big.end(), [](const JobTimes *a, const JobTimes *b) { return a->bytes > b->bytes; });
    std::sort(small.begin(), small.end(), [](const JobTimes *a, const JobTimes *b) { return a->bytes < b->bytes; });
    // heaviest_from[i]: of small[i..], the job with the longest GPU part (nullptr past the end).
    std::vector<const JobTimes *> heaviest_from(small.size() + 1, nullptr);
    for (size_t i = small.size(); i-- > 0;)
        heaviest_from[i] =
            heaviest_from[i + 1] && heaviest_from[i + 1]->gpu_s >= small[i]->gpu_s ? heaviest_from[i + 1] : small[i];
    double best = 0, gpu_s = 0, first_cpu_s = 0;
    for (size_t p = 0; p < big.size(); ++p) {
        gpu_s += big[p]->gpu_s;
        first_cpu_s = p == 0 ? big[p]->cpu_s : std::min(first_cpu_s, big[p]->cpu_s);
        best = std::max(best, first_cpu_s + gpu_s / devices);
        // The small jobs whose bytes with the smallest big one's exceed the capacity.
        const double room = capacity - double(big[p]->bytes);
        const auto from = std::upper_bound(small.begin(), small.end(), room,
                                           [](double r, const JobTimes *t) { return r < double(t->bytes); });
        if (const JobTimes *extra = heaviest_from[size_t(from - small.begin())])
            best = std::max(best, std::min(first_cpu_s, extra->cpu_s) + (gpu_s + extra->gpu_s) / devices);
    }
    return best;
}

}  // namespace

BoundTerms makespan_lower_bound(const MgbScenario &s, unsigned workers, Colocation colocation,
                                const std::vector<double> &cpu_factor, const std::vector<double> &gpu_factor)
{
    BoundTerms b;
    std::vector<JobTimes> jobs;
    std::vector<double> worker_time;  // per job in queue order: how long it holds its worker at least
    std::vector<char> counted;        // per job: fits some device
    for (size_t j = 0; j < s.jobs.size(); ++j) {
        const double cpu = cpu_factor.empty() ? 1.0 : cpu_factor[j];
        const JobTimes t = times_of(s.jobs[j], s, colocation, cpu, gpu_factor.empty() ? 1.0 : gpu_factor[j]);
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
        double devices = 0, capacity = 0, largest = 0;
        for (const mgb::GpuSpec &gpu : s.gpus)
            if (gpu.memory_bytes >= level) {
                devices += 1;
                capacity += double(gpu.memory_bytes);
                largest = std::max(largest, double(gpu.memory_bytes));
            }
        double share_s = 0, byte_s = 0;
        std::vector<const JobTimes *> here;
        for (const JobTimes &t : jobs)
            if (t.need_capacity >= level) {
                share_s += t.sm_share_s;
                byte_s += double(t.bytes) * t.gpu_s;
                here.push_back(&t);
            }
        b.sm_s = std::max(b.sm_s, share_s / devices);
        b.memory_s = std::max(b.memory_s, byte_s / capacity);
        b.exclusive_s = std::max(b.exclusive_s, exclusive_term(std::move(here), largest, devices));
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
