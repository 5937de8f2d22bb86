// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/models/models_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/settings.h"
#include "sched_policies/plbhac/core/plbhac_model_store.h"
#include "sched_policies/plbhac/core/plbhac_straggle.h"

namespace hetpu::models_cli {

namespace {

std::string when(double unix_s)
{
    if (unix_s <= 0)
        return "-";
    const std::time_t t = static_cast<std::time_t>(unix_s);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
    return buf;
}

std::string workers_text(const PlbhacModelKey &k)
{
    std::string s;
    for (const auto &w : k.workers) {
        // "<id> <name> <kind>": the name is what a user recognises.
        const auto a = w.find(' '), b = w.rfind(' ');
        s += (s.empty() ? "" : ",") + (a != std::string::npos && b > a ? w.substr(a + 1, b - a - 1) : w);
    }
    return s;
}

int list(const std::string &home, bool json)
{
    const auto entries = list_plbhac_models(home);
    if (json) {
        nlohmann::json a = nlohmann::json::array();
        for (const auto &e : entries) {
            nlohmann::json o{{"path", e.path}};
            if (e.file)
                o.update({{"job", e.file->key.job},
                          {"elements", e.file->key.elements},
                          {"host", e.file->key.host},
                          {"workers", e.file->key.workers},
                          {"runs", e.file->runs},
                          {"saved_unix_s", e.file->saved_unix_s}});
            else
                o["error"] = e.error;
            a.push_back(o);
        }
        std::printf("%s\n", a.dump().c_str());
        return 0;
    }
    if (entries.empty()) {
        std::printf("no saved PLB-HAC models under %s\n", plbhac_models_dir(home).c_str());
        return 0;
    }
    std::printf("%-20s %12s %-16s %5s  %-19s  %s\n", "job", "elements", "host", "runs", "saved", "workers");
    for (const auto &e : entries) {
        if (e.file)
            std::printf("%-20s %12llu %-16s %5u  %-19s  %s\n", e.file->key.job.c_str(),
                        static_cast<unsigned long long>(e.file->key.elements), e.file->key.host.c_str(), e.file->runs,
                        when(e.file->saved_unix_s).c_str(), workers_text(e.file->key).c_str());
        else
            std::printf("%-20s (unreadable: %s)\n", std::filesystem::path(e.path).filename().c_str(), e.error.c_str());
    }
    return 0;
}

int show(const std::string &home, const std::string &job, bool json)
{
    int found = 0;
    nlohmann::json out = nlohmann::json::array();
    // Files named like this job's (<job>.<hash>.json) that cannot be read: the reason the
    // job has no models, said when nothing else is found.
    std::vector<std::string> unreadable;
    for (const auto &e : list_plbhac_models(home)) {
        if (!e.file) {
            const std::string name = std::filesystem::path(e.path).filename().string();
            if (name.rfind(job + ".", 0) == 0)
                unreadable.push_back(name + ": " + e.error);
            continue;
        }
        if (e.file->key.job != job)
            continue;
        ++found;
        const PlbhacModelFile &f = *e.file;
        if (json) {
            nlohmann::json o{
                {"path", e.path}, {"job", f.key.job},         {"elements", f.key.elements},    {"host", f.key.host},
                {"runs", f.runs}, {"workers", f.key.workers}, {"pus", nlohmann::json::array()}};
            for (const auto &pu : f.memory.pus)
                o["pus"].push_back(
                    {{"worker", pu.worker},
                     {"exec_points", pu.exec.points().size()},
                     {"exec_held", pu.exec.held_points()},
                     {"size_lo", pu.size_lo},
                     {"size_hi", pu.size_hi},
                     {"exec_curve", pu.exec.describe()},
                     {"transfer_curve", pu.transfer.describe()},
                     {"latency_s", plbhac_latency_s(pu.latency)},
                     {"home_delay_s", plbhac_latency_s(pu.home)},
                     {"misses", pu.misses.size()},
                     {"miss_spread", plbhac_miss_spread(pu.misses)},
                     {"seconds_at_size_hi",
                      pu.exec.predict(pu.size_hi) + pu.transfer.predict(pu.size_hi) + plbhac_latency_s(pu.latency)}});
            out.push_back(o);
            continue;
        }
        std::printf("%s\n  job %s of %llu elements on host %s, %u runs, saved %s\n", e.path.c_str(), f.key.job.c_str(),
                    static_cast<unsigned long long>(f.key.elements), f.key.host.c_str(), f.runs,
                    when(f.saved_unix_s).c_str());
        for (size_t i = 0; i < f.memory.pus.size(); ++i) {
            const PlbhacPuMemory &pu = f.memory.pus[i];
            const std::string name = i < f.key.workers.size() ? f.key.workers[i] : std::to_string(pu.worker);
            const double hi = pu.size_hi;
            const double latency = plbhac_latency_s(pu.latency);
            const double t = pu.exec.predict(hi) + pu.transfer.predict(hi) + latency;
            std::printf("  worker %s: %zu points, blocks %.0f..%.0f elements, %.4g s at %.0f (%.4g elements/s)\n"
                        "    exec     %s\n    transfer %s\n    latency  %.3g s per block (median of %zu)\n"
                        "    home     %.3g s from a block's end to its results in main memory (median of %zu)\n"
                        "    misses   %.3g spread of log(measured / predicted) (%zu blocks, out of sample)\n",
                        name.c_str(), pu.exec.points().size(), pu.size_lo, hi, t, hi, t > 0 ? hi / t : 0.0,
                        pu.exec.describe().c_str(), pu.transfer.describe().c_str(), latency, pu.latency.size(),
                        plbhac_latency_s(pu.home), pu.home.size(), plbhac_miss_spread(pu.misses), pu.misses.size());
            for (const auto &[x, seconds] : pu.exec.held_points())
                std::printf("    held     %.0f elements in %.4g s, %.2gx the prediction: a spike or a change, the "
                            "next block tells\n",
                            x, seconds, seconds / std::max(pu.exec.predict(x), 1e-12));
        }
    }
    if (json)
        std::printf("%s\n", out.dump().c_str());
    if (!found) {
        std::fprintf(stderr, "hetpu models: no saved models for job '%s' under %s\n", job.c_str(),
                     plbhac_models_dir(home).c_str());
        for (const std::string &u : unreadable)
            std::fprintf(stderr,
                         "hetpu models: unreadable, ignored by runs: %s (the job's next run rewrites it; "
                         "'hetpu models clear --all' removes it)\n",
                         u.c_str());
        return 1;
    }
    return 0;
}

int clear(const std::string &home, const std::string &job, bool all)
{
    int removed = 0, failed = 0;
    for (const auto &e : list_plbhac_models(home)) {
        // An unreadable file belongs to no job: only --all removes it.
        if (!all && (!e.file || e.file->key.job != job))
            continue;
        std::error_code ec;
        if (std::filesystem::remove(e.path, ec)) {
            ++removed;
            std::printf("removed %s\n", e.path.c_str());
        } else {
            ++failed;
            std::fprintf(stderr, "hetpu models: cannot remove %s: %s\n", e.path.c_str(), ec.message().c_str());
        }
    }
    if (!removed && !failed)
        std::printf("nothing to remove under %s\n", plbhac_models_dir(home).c_str());
    return failed ? 1 : 0;
}

}  // namespace

int models_command(int argc, char **argv)
{
    CLI::App app{"PLB-HAC models saved across runs, per job, job size, worker set and host "
                 "($HETPU_HOME/plbhac-models; HETPU_PLBHAC_MODELS=off stops a run reading or saving them).",
                 "hetpu models"};
    app.require_subcommand(1);
    std::string home, job;
    bool json = false, all = false;
    const std::string home_help =
        "models home (default: $HETPU_HOME, else $XDG_DATA_HOME/hetpu, else ~/.local/share/hetpu)";
    CLI::App *ls = app.add_subcommand("list", "one line per saved job, job size, worker set and host");
    ls->add_option("--home", home, home_help);
    ls->add_flag("--json", json, "a JSON array instead of text");
    CLI::App *sh = app.add_subcommand("show", "the models of a job: points, block sizes, fitted curves per worker");
    sh->add_option("job", job, "job name (as `hetpu models list` shows it)")->required();
    sh->add_option("--home", home, home_help);
    sh->add_flag("--json", json, "a JSON array instead of text");
    CLI::App *cl = app.add_subcommand("clear", "remove the saved models of a job (the next run trains again)");
    cl->add_option("job", job, "job name");
    cl->add_flag("--all", all, "remove every saved model, unreadable files included");
    cl->add_option("--home", home, home_help);

    // CLI11 takes the arguments as a reversed vector when there is no program name.
    std::vector<std::string> args;
    for (int i = argc - 1; i >= 0; --i)
        args.emplace_back(argv[i]);
    try {
        app.parse(args);
        if (cl->parsed() && job.empty() == !all)
            throw CLI::ValidationError("clear", "give a JOB or --all (not both)");
    } catch (const CLI::ParseError &e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    if (home.empty())
        home = hetpu_home();
    if (home.empty()) {
        std::fprintf(stderr, "hetpu models: set HETPU_HOME (or HOME) or give --home DIR\n");
        return 2;
    }
    if (ls->parsed())
        return list(home, json);
    if (sh->parsed())
        return show(home, job, json);
    return clear(home, job, all);
}

}  // namespace hetpu::models_cli
