// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/mgb_sim/mgb_sim_command.h"
#include "common/cli_args.h"

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>

namespace hetpu::mgb_sim {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::vector<std::string> split_commas(const std::string &text)
{
    std::vector<std::string> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty())
            out.push_back(item);
    return out;
}

void print_summary(const SimResult &r, double wall_s)
{
    std::printf("policy %s (%u workers%s): makespan %.1f s, %u/%u jobs completed, %u crashed, %u rejected\n",
                r.policy.c_str(), r.workers, r.cg_ratio ? (", cg ratio " + std::to_string(r.cg_ratio)).c_str() : "",
                r.makespan_s, r.jobs_completed, r.jobs, r.jobs_crashed, r.jobs_rejected);
    std::printf("  lower bound %.1f s (%s): makespan is %.3fx the bound\n", r.lower_bound_s, r.bound.binding.c_str(),
                r.lower_bound_s > 0 ? r.makespan_s / r.lower_bound_s : 0.0);
    std::printf("  throughput %.2f jobs/h, mean turnaround %.1f s, mean wait for a device %.1f s, "
                "mean kernel slowdown %.2f%%  (%llu events, simulated in %.4f s)\n",
                r.throughput_jobs_per_hour, r.mean_turnaround_s, r.mean_gpu_wait_s, r.mean_kernel_slowdown_pct,
                static_cast<unsigned long long>(r.events), wall_s);
    for (size_t d = 0; d < r.gpus.size(); ++d) {
        const GpuRecord &g = r.gpus[d];
        std::printf(
            "  gpu%-2zu %-6s busy %5.1f%%  jobs %3u (at most %u at once)  peak memory %.2f GiB (reserved %.2f GiB)\n",
            d, g.name.c_str(), r.makespan_s > 0 ? 100.0 * g.busy_s / r.makespan_s : 0.0, g.jobs, g.peak_jobs,
            g.peak_allocated_bytes / kGiB, g.peak_reserved_bytes / kGiB);
    }
}

nlohmann::json bound_to_json(const BoundTerms &b)
{
    return {{"policy", "bound"},
            {"lower_bound_s", b.bound_s},
            {"binding", b.binding},
            {"longest_s", b.longest_s},
            {"sm_s", b.sm_s},
            {"memory_s", b.memory_s},
            {"workers_s", b.workers_s},
            {"queue_s", b.queue_s},
            {"exclusive_s", b.exclusive_s},
            {"jobs_counted", b.jobs_counted}};
}

void print_bound(const BoundTerms &b)
{
    std::printf("lower bound on the makespan: %.1f s (%s binds; %u jobs fit some device)\n", b.bound_s,
                b.binding.c_str(), b.jobs_counted);
    std::printf(
        "  longest job %.1f s, queue order %.1f s, exclusive memory %.1f s, SM time %.1f s, memory time %.1f s, "
        "workers %.1f s\n",
        b.longest_s, b.queue_s, b.exclusive_s, b.sm_s, b.memory_s, b.workers_s);
}

}  // namespace

nlohmann::json result_to_json(const SimResult &r, bool per_job)
{
    nlohmann::json j = {
        {"policy", r.policy},
        {"workers", r.workers},
        {"seed", r.seed},
        {"jobs", r.jobs},
        {"makespan_s", r.makespan_s},
        {"jobs_completed", r.jobs_completed},
        {"jobs_crashed", r.jobs_crashed},
        {"jobs_rejected", r.jobs_rejected},
        {"crashed_pct", r.jobs ? 100.0 * r.jobs_crashed / r.jobs : 0.0},
        {"throughput_jobs_per_hour", r.throughput_jobs_per_hour},
        {"mean_turnaround_s", r.mean_turnaround_s},
        {"mean_gpu_wait_s", r.mean_gpu_wait_s},
        {"mean_kernel_slowdown_pct", r.mean_kernel_slowdown_pct},
        {"events", r.events},
        {"colocation", r.colocation},
        {"lower_bound_s", r.lower_bound_s},
        {"makespan_over_bound", r.lower_bound_s > 0 ? r.makespan_s / r.lower_bound_s : 0.0},
    };
    if (r.cg_ratio)
        j["cg_ratio"] = r.cg_ratio;
    nlohmann::json gpus = nlohmann::json::array();
    for (const GpuRecord &g : r.gpus)
        gpus.push_back({{"name", g.name},
                        {"busy_s", g.busy_s},
                        {"busy_pct", r.makespan_s > 0 ? 100.0 * g.busy_s / r.makespan_s : 0.0},
                        {"jobs", g.jobs},
                        {"peak_jobs", g.peak_jobs},
                        {"peak_memory_bytes", g.peak_allocated_bytes},
                        {"peak_reserved_bytes", g.peak_reserved_bytes}});
    j["gpus"] = gpus;
    if (per_job) {
        nlohmann::json jobs = nlohmann::json::array();
        for (const JobRecord &rec : r.job_records)
            jobs.push_back({{"name", rec.name},
                            {"device", rec.device},
                            {"start_s", rec.start_s},
                            {"granted_s", rec.granted_s},
                            {"end_s", rec.end_s},
                            {"gpu_wait_s", rec.gpu_wait_s},
                            {"completed", rec.completed},
                            {"crashed", rec.crashed},
                            {"rejected", rec.rejected},
                            {"kernels", rec.kernels},
                            {"kernel_slowdown_pct", rec.kernel_slowdown_pct}});
        j["job_records"] = jobs;
    }
    return j;
}

namespace {

// Why a run failed: the jobs that fit no device, each with what it needs beside the largest
// device, and the way out.
void report_rejected(const SimResult &r, const MgbScenario &s)
{
    const mgb::GpuSpec *largest = &s.gpus.front();
    for (const mgb::GpuSpec &g : s.gpus)
        if (g.memory_bytes > largest->memory_bytes)
            largest = &g;
    std::fprintf(stderr, "hetpu mgb-sim: policy %s rejected %u of %u jobs: they fit no device they may use\n",
                 r.policy.c_str(), r.jobs_rejected, r.jobs);
    unsigned shown = 0;
    for (size_t j = 0; j < r.job_records.size() && shown < 5; ++j) {
        if (!r.job_records[j].rejected)
            continue;
        ++shown;
        const JobSpec &job = s.jobs[j];
        std::fprintf(stderr, "  job %zu '%s': %.2f GiB%s; the largest device, %s, has %.2f GiB\n", j, job.name.c_str(),
                     double(job.memory_bytes) / double(1u << 30),
                     job.memory_bytes <= largest->memory_bytes ? " (fits in memory: its devices, pinning or a kernel's "
                                                                 "block shape rule them out)"
                                                               : "",
                     largest->name, double(largest->memory_bytes) / double(1u << 30));
    }
    std::fprintf(stderr, "fix the jobs or the devices, or pass --allow-rejected to count them as rejected\n");
}

}  // namespace

int mgb_sim_command(int argc, char **argv)
{
    CLI::App app{"Simulate a batch of GPU jobs on one node under an MGB-family placement policy.\n"
                 "The scenario (JSON) gives the GPUs, the worker pool and the jobs; see tools/mgb_sim/scenario.h.",
                 "hetpu mgb-sim"};
    std::string scenario_path, policies = "mgb";
    unsigned cg_ratio = 0, workers = 0;
    std::string seed_text = "1";
    std::string colocation;
    bool json = false, per_job = false, allow_rejected = false;
    app.add_option("--scenario", scenario_path, "scenario JSON file")->required();
    app.add_option("--policy", policies,
                   "sa, cg, mgb (Alg. 3), mgb-exact (Alg. 2), schedgpu (memory only, one device), or bound (the "
                   "makespan lower bound and its terms, no simulation); several separated by commas run one after "
                   "the other (default mgb)");
    app.add_option("--colocation", colocation,
                   "how co-located kernels share a device: mps (concurrent kernels) or time-sliced (no MPS); "
                   "default: the scenario's \"colocation\", else mps");
    app.add_option("--cg-ratio", cg_ratio, "CG's jobs per device (default: ceil(workers / devices))");
    app.add_option("--workers", workers, "worker pool size (default: the scenario's)")->check(CLI::Range(1u, 4096u));
    app.add_option("--seed", seed_text, "seed of the run-time noise (scenario \"noise\"; 0 or more, default 1)")
        ->type_name("N");
    app.add_flag("--allow-rejected", allow_rejected,
                 "a job that fits no device (memory, or a kernel no device can run) is only counted as rejected; "
                 "without it, a run that rejects a job fails naming the job");
    app.add_flag("--json", json, "one JSON object per run (one line each) instead of the summary");
    app.add_flag("--per-job", per_job, "with --json: add every job's record (device, start, end, outcome)");
    if (const auto rc = hetpu::cli::parse_args(app, argc, argv))
        return *rc;
    // Parsed here: an integer option clamps 99999999999999999999 to its largest value, and a
    // uint64_t one takes -1 as 2^64 - 1, both without a word.
    uint64_t seed = 0;
    if (const auto [end, ec] = std::from_chars(seed_text.data(), seed_text.data() + seed_text.size(), seed);
        ec != std::errc() || end != seed_text.data() + seed_text.size()) {
        std::fprintf(stderr, "hetpu mgb-sim: --seed must be a whole number from 0 to %llu (got '%s')\n",
                     static_cast<unsigned long long>(UINT64_MAX), seed_text.c_str());
        return 2;
    }
    std::optional<Colocation> model;
    if (!colocation.empty()) {
        Colocation c;
        if (!parse_colocation(colocation, c)) {
            std::fprintf(stderr, "hetpu mgb-sim: --colocation: unknown model '%s' (mps or time-sliced)\n",
                         colocation.c_str());
            return 2;
        }
        model = c;
    }
    std::vector<std::optional<Policy>> runs;  // nullopt: the bound
    for (const std::string &name : split_commas(policies)) {
        Policy p;
        if (name == "bound") {
            runs.push_back(std::nullopt);
            continue;
        }
        if (!parse_policy(name, p)) {
            std::fprintf(stderr, "hetpu mgb-sim: unknown policy '%s' (sa, cg, mgb, mgb-exact, schedgpu, bound)\n",
                         name.c_str());
            return 2;
        }
        runs.push_back(p);
    }
    if (runs.empty()) {
        std::fprintf(stderr, "hetpu mgb-sim: --policy names no policy\n");
        return 2;
    }
    MgbScenario scenario;
    try {
        scenario = load_mgb_scenario(scenario_path);
    } catch (const ScenarioError &e) {
        std::fprintf(stderr, "hetpu mgb-sim: %s\n", e.what());
        return 1;
    }
    for (const std::optional<Policy> &p : runs) {
        if (!p) {
            std::vector<double> cpu, gpu;
            draw_job_factors(scenario, seed, cpu, gpu);
            const BoundTerms b = makespan_lower_bound(scenario, workers ? workers : scenario.workers,
                                                      model.value_or(scenario.colocation), cpu, gpu);
            if (json) {
                nlohmann::json j = bound_to_json(b);
                j["tool"] = "hetpu mgb-sim";
                j["scenario"] = scenario_path;
                j["seed"] = seed;
                std::printf("%s\n", j.dump().c_str());
            } else {
                print_bound(b);
            }
            continue;
        }
        SimOptions options;
        options.policy = *p;
        options.workers = workers;
        options.cg_ratio = cg_ratio;
        options.seed = seed;
        options.colocation = model;
        const auto t0 = std::chrono::steady_clock::now();
        const SimResult r = simulate(scenario, options);
        const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (json) {
            nlohmann::json j = result_to_json(r, per_job);
            j["tool"] = "hetpu mgb-sim";
            j["scenario"] = scenario_path;
            j["sim_wall_s"] = wall_s;
            std::printf("%s\n", j.dump().c_str());
        } else {
            print_summary(r, wall_s);
        }
        if (r.jobs_rejected > 0 && !allow_rejected) {
            report_rejected(r, scenario);
            return 1;
        }
    }
    return 0;
}

}  // namespace hetpu::mgb_sim
