// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/batch/batch_command.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tools/batch/batch_runner.h"
#include "common/cli_args.h"

namespace hetpu::batch {

namespace {

nlohmann::json job_json(const JobResult &r)
{
    return {{"job", r.index},
            {"command", r.command},
            {"start_s", r.start_s},
            {"end_s", r.end_s},
            {"duration_s", r.end_s - r.start_s},
            {"exit_status", r.exit_status},
            {"signal", r.signal},
            {"timed_out", r.timed_out},
            {"crashed", r.crashed},
            {"signal_via_shell", r.signal_via_shell},
            {"ok", r.ok()}};
}

const char *outcome(const JobResult &r)
{
    return r.ok() ? "ok" : r.timed_out ? "TIMED OUT" : r.crashed ? "CRASHED" : "FAILED";
}

}  // namespace

int batch_command(int argc, char **argv)
{
    CLI::App app{"Run a queue of independent shell commands (one per line of FILE; blank lines and '#' comments\n"
                 "skipped) N at a time, like the MGB paper's worker pool. Prints throughput and mean turnaround.\n"
                 "Exit status: 0 when every job succeeded, 1 otherwise.",
                 "hetpu batch"};
    std::string jobs_path, json_path, log_dir, label;
    unsigned workers = 1;
    double timeout_s = 0;
    bool quiet_jobs = false;
    app.add_option("--jobs", jobs_path, "file of shell command lines")->required();
    app.add_option("--workers", workers, "jobs run at once (default 1)")->check(CLI::Range(1u, 4096u));
    app.add_option("--timeout", timeout_s, "seconds per job before its process group is killed (default: none)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--json", json_path, "write one JSON line per job, then a summary line, to this file");
    app.add_option(
        "--log-dir", log_dir,
        "send job i's stdout/stderr to DIR/job-<i>.out/.err (i counts from 0, as in the JSON and progress lines)");
    app.add_option("--label", label, "a name for this batch, copied into the JSON summary (e.g. the policy)");
    app.add_flag("--quiet-jobs", quiet_jobs, "without --log-dir: discard the jobs' output");
    if (const auto rc = hetpu::cli::parse_args(app, argc, argv))
        return *rc;
    std::ifstream in(jobs_path);
    if (!in) {
        std::fprintf(stderr, "hetpu batch: cannot read '%s'\n", jobs_path.c_str());
        return 2;
    }
    std::stringstream text;
    text << in.rdbuf();
    const std::vector<std::string> commands = read_job_lines(text.str());
    if (commands.empty()) {
        std::fprintf(stderr, "hetpu batch: '%s' has no command line\n", jobs_path.c_str());
        return 2;
    }
    std::ofstream json;
    if (!json_path.empty()) {
        json.open(json_path, std::ios::trunc);
        if (!json) {
            std::fprintf(stderr, "hetpu batch: cannot write '%s'\n", json_path.c_str());
            return 2;
        }
    }
    BatchOptions options;
    options.workers = workers;
    options.timeout_s = timeout_s;
    options.log_dir = log_dir;
    options.quiet_jobs = quiet_jobs;
    const size_t total = commands.size();
    size_t ended = 0;
    std::vector<JobResult> results;
    try {
        results = run_batch(
            commands, options,
            [&](const JobResult &r) {
                // "job N" is the index the JSON lines and the --log-dir files use.
                std::fprintf(stderr, "hetpu batch: [start %zu/%zu] job %zu: %s\n", r.index + 1, total, r.index,
                             r.command.c_str());
            },
            [&](const JobResult &r) {
                ++ended;
                std::fprintf(stderr, "hetpu batch: [%zu/%zu done] job %zu %s after %.2f s (exit %d%s)\n", ended, total,
                             r.index, outcome(r), r.end_s - r.start_s, r.exit_status,
                             r.signal ? (", signal " + std::to_string(r.signal)).c_str() : "");
                if (json.is_open())
                    json << job_json(r).dump() << '\n' << std::flush;
            });
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hetpu batch: %s\n", e.what());
        return 2;
    }
    const BatchSummary s = summarize(results);
    std::printf("%u jobs, %u workers: %u ok, %u failed, %u timed out, %u crashed\n", s.jobs, workers, s.ok, s.failed,
                s.timed_out, s.crashed);
    std::printf("makespan %.2f s, throughput %.3f jobs/min, mean turnaround %.2f s\n", s.makespan_s,
                s.throughput_jobs_per_min, s.mean_turnaround_s);
    if (json.is_open()) {
        nlohmann::json j = {{"summary", true},
                            {"jobs", s.jobs},
                            {"workers", workers},
                            {"timeout_s", timeout_s},
                            {"ok", s.ok},
                            {"failed", s.failed},
                            {"timed_out", s.timed_out},
                            {"crashed", s.crashed},
                            {"makespan_s", s.makespan_s},
                            {"throughput_jobs_per_min", s.throughput_jobs_per_min},
                            {"mean_turnaround_s", s.mean_turnaround_s}};
        if (!label.empty())
            j["label"] = label;
        json << j.dump() << '\n';
    }
    return s.ok == s.jobs ? 0 : 1;
}

}  // namespace hetpu::batch
