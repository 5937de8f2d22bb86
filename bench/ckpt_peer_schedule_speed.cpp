// SPDX-License-Identifier: LGPL-2.1-or-later
// Cost of the min-time max-flow peer schedule at any bandwidth ratio: random problems of 2 to
// 16 devices whose link bandwidths spread over ratios 1 to 1e12 (log-uniform below 100 GB/s),
// some links missing, remainders and spares from bytes to a GiB. For each ratio decade it
// reports the worst and median time of one schedule_min_time_max_flow call and the peak heap
// memory it allocated (every operator new counted), with the greedy schedule timed on the same
// problems as the baseline of the same run. Times are the calling thread's CPU time (what the
// call costs; on a shared machine its wall time also counts the time slices other processes
// took meanwhile), and the worst wall time is printed beside them.
#include "ckpt_backend/core/peer_schedule.h"
#include "ckpt_backend/core/random_peer_problem.h"
#include "common/cli_args.h"
#include "bench/heap_counter.h"
#include "common/json_line.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <time.h>
#include <vector>

using namespace hetpu::ckpt;

namespace {

double thread_cpu_s()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double seconds_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct Row {
    double ratio, worst_s = 0, median_s = 0, greedy_worst_s = 0, worst_wall_s = 0;
    std::size_t peak_bytes = 0;
    int worst_devices = 0;
};

}  // namespace

int main(int argc, char **argv)
{
    int per_ratio = 100;
    std::string json;
    CLI::App app{"Worst time and heap of the min-time max-flow peer schedule over bandwidth ratios 1 to 1e12.",
                 "ckpt_peer_schedule_speed"};
    app.add_option("--problems", per_ratio, "random problems per ratio decade")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--json", json, "JSON lines to FILE")->type_name("FILE");
    if (std::optional<int> rc = hetpu::cli::parse_args(app, argc - 1, argv + 1))
        return *rc;
    std::mt19937_64 rng(12);
    std::vector<Row> rows;
    for (int decade = 0; decade <= 12; ++decade) {
        Row row;
        row.ratio = std::pow(10.0, decade);
        std::vector<double> times;
        for (int k = 0; k < per_ratio; ++k) {
            // Half the problems at 16 devices (the largest), the rest 2 to 15.
            const int n = k % 2 == 0 ? 16 : 2 + static_cast<int>(rng() % 14);
            const PeerProblem p = random_peer_problem(rng, n, row.ratio);
            const std::size_t before = hetpu::bench::heap_mark();
            const auto wall = std::chrono::steady_clock::now();
            double cpu = thread_cpu_s();
            const PeerSchedule s = schedule_min_time_max_flow(p);
            const double took = thread_cpu_s() - cpu;
            row.worst_wall_s = std::max(row.worst_wall_s, seconds_since(wall));
            row.peak_bytes = std::max(row.peak_bytes, hetpu::bench::heap_peak_since(before));
            if (took > row.worst_s) {
                row.worst_s = took;
                row.worst_devices = n;
            }
            times.push_back(took);
            cpu = thread_cpu_s();
            const PeerSchedule g = schedule_greedy(p);
            row.greedy_worst_s = std::max(row.greedy_worst_s, thread_cpu_s() - cpu);
            if (s.feasible && g.feasible && s.time > g.time * (1 + 1e-6)) {
                std::fprintf(stderr, "ckpt_peer_schedule_speed: the flow schedule is slower than greedy\n");
                return 1;
            }
        }
        std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
        row.median_s = times[times.size() / 2];
        rows.push_back(row);
    }
    std::printf("%d problems per ratio (half of them 16 devices), schedule_min_time_max_flow per call (thread CPU "
                "time); greedy on the same problems as the baseline\n",
                per_ratio);
    std::printf(
        "| bandwidth ratio | worst ms (devices) | median ms | worst wall ms | peak heap KiB | greedy worst ms |\n"
        "|---|---|---|---|---|---|\n");
    Row worst;
    for (const Row &r : rows) {
        std::printf("| 1e%.0f | %.3f (%d) | %.3f | %.3f | %.1f | %.4f |\n", std::log10(r.ratio), 1e3 * r.worst_s,
                    r.worst_devices, 1e3 * r.median_s, 1e3 * r.worst_wall_s, r.peak_bytes / 1024.0,
                    1e3 * r.greedy_worst_s);
        worst.worst_s = std::max(worst.worst_s, r.worst_s);
        worst.worst_wall_s = std::max(worst.worst_wall_s, r.worst_wall_s);
        worst.peak_bytes = std::max(worst.peak_bytes, r.peak_bytes);
    }
    std::printf("over every ratio: worst %.3f ms CPU (%.3f ms wall), peak heap %.1f KiB (limits: 10 ms, a few MB)\n",
                1e3 * worst.worst_s, 1e3 * worst.worst_wall_s, worst.peak_bytes / 1024.0);
    if (!json.empty()) {
        FILE *f = std::fopen(json.c_str(), "w");
        if (!f) {
            std::perror(json.c_str());
            return 1;
        }
        for (const Row &r : rows) {
            const hetpu::JsonRecord j = {{"bench", "ckpt_peer_schedule_speed"},
                                         {"ratio", r.ratio},
                                         {"worst_ms", 1e3 * r.worst_s},
                                         {"median_ms", 1e3 * r.median_s},
                                         {"worst_wall_ms", 1e3 * r.worst_wall_s},
                                         {"peak_heap_bytes", static_cast<double>(r.peak_bytes)},
                                         {"greedy_worst_ms", 1e3 * r.greedy_worst_s}};
            std::fprintf(f, "%s\n", hetpu::json_line(j).c_str());
        }
        std::fclose(f);
    }
    return 0;
}
