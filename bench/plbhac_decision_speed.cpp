// SPDX-License-Identifier: LGPL-2.1-or-later
// Cost of one planning decision of PLB-HAC's ladder (a completion: refit, re-plan, take
// back, hand out, backups at the tail), through the BlockDispatcher the runtime uses, on
// nodes of 8 to 64 CPUs beside 1 or 4 GPUs. Completions come in the order of a simple
// simulation (each unit's time linear in its block, CPUs spread over 1:1.5, GPUs 40x a CPU,
// a hand-out lead of 0.5 ms on a CPU and 6.5 ms on a GPU). Prints the median, 90th
// percentile and largest of the timed decisions per node, then JSON lines; `hetpu sim
// --decision-cost-us` charges what this measures.
// Usage: plbhac_decision_speed [jobs]   (default 20 jobs per node, ~0.1 s of simulated work each)
#include "common/json_line.h"
#include "runtime/divisible/core/block_dispatcher.h"
#include "sched_policies/plbhac/core/plbhac_ladder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <queue>
#include <vector>

namespace {

struct Unit {
    double per_element_s, fixed_s, lead_s;
};

struct End {
    double at;
    hetpu::Assignment a;
    double start, handed;
    bool operator>(const End &o) const { return at > o.at; }
};

// One job to its end; appends each complete() call's seconds to `times`.
void run_job(const std::vector<Unit> &units, uint64_t total, unsigned seed, std::vector<double> &times)
{
    std::vector<hetpu::PlannerWorker> workers;
    std::vector<int> ids;
    for (size_t i = 0; i < units.size(); ++i) {
        workers.push_back({static_cast<int>(i), units[i].lead_s > 1e-3 ? hetpu::WorkerKind::Cuda : hetpu::WorkerKind::Cpu,
                           "u" + std::to_string(i)});
        ids.push_back(static_cast<int>(i));
    }
    hetpu::BlockRules rules{total, 1, 1};
    hetpu::PlbhacLadderPlanner planner(workers, rules, hetpu::PlbhacOptions{});
    hetpu::BlockDispatcher d(rules, planner, ids);
    d.set_backup_all(false);
    d.set_tail_backups(true);
    std::vector<double> free_at(units.size(), 0);
    std::priority_queue<End, std::vector<End>, std::greater<End>> ends;
    unsigned noise = seed;
    auto accept = [&](const std::vector<hetpu::Assignment> &as, double now) {
        for (const auto &a : as) {
            const Unit &u = units[static_cast<size_t>(a.worker)];
            noise = noise * 1103515245u + 12345u;
            const double factor = 0.9 + 0.2 * static_cast<double>((noise >> 8) % 1000) / 1000.0;
            const double start = std::max(free_at[static_cast<size_t>(a.worker)], now + u.lead_s);
            const double end = start + (u.fixed_s + u.per_element_s * static_cast<double>(a.count)) * factor;
            free_at[static_cast<size_t>(a.worker)] = end;
            ends.push({end, a, start, now});
        }
    };
    accept(d.start(), 0);
    while (!ends.empty()) {
        const End e = ends.top();
        ends.pop();
        d.started(e.a.id, e.start);
        const Unit &u = units[static_cast<size_t>(e.a.worker)];
        hetpu::BlockDone done{e.a.worker, e.a.offset, e.a.count, u.per_element_s * static_cast<double>(e.a.count),
                              u.fixed_s, e.at, e.handed, e.a.id, e.a.backup};
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<hetpu::Assignment> next = d.complete(done);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        accept(next, e.at);
    }
}

}  // namespace

int main(int argc, char **argv)
{
    const int jobs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
    std::printf("%-10s %6s %10s %10s %10s %10s\n", "node", "PUs", "decisions", "median_us", "p90_us", "max_us");
    for (int cpus : {8, 16, 64})
        for (int gpus : {1, 4}) {
            std::vector<Unit> units;
            for (int i = 0; i < cpus; ++i)
                units.push_back({1e-6 * (1 + 0.5 * i / cpus), 2e-5, 5e-4});
            for (int i = 0; i < gpus; ++i)
                units.push_back({2.5e-8, 4e-4, 6.5e-3});
            const double rate = cpus / 1e-6 + gpus / 2.5e-8;
            std::vector<double> times;
            for (int j = 0; j < jobs; ++j)
                run_job(units, static_cast<uint64_t>(0.1 * rate), static_cast<unsigned>(j + 1), times);
            std::sort(times.begin(), times.end());
            const double median = times[times.size() / 2] * 1e6, p90 = times[times.size() * 9 / 10] * 1e6,
                         largest = times.back() * 1e6;
            const std::string name = "c" + std::to_string(cpus) + "g" + std::to_string(gpus);
            std::printf("%-10s %6d %10zu %10.1f %10.1f %10.1f\n", name.c_str(), cpus + gpus, times.size(), median, p90,
                        largest);
            std::printf("%s\n", hetpu::json_line({{"bench", "plbhac_decision_speed"},
                                                  {"node", name},
                                                  {"pus", cpus + gpus},
                                                  {"decisions", times.size()},
                                                  {"median_us", median},
                                                  {"p90_us", p90},
                                                  {"max_us", largest}})
                                    .c_str());
        }
    return 0;
}
