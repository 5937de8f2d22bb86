// SPDX-License-Identifier: LGPL-2.1-or-later
// Environment: HETPU_HOME (profiles under $HETPU_HOME/profiles/<job>.csv, default
// ~/.local/share/hetpu; computed fronts kept under $HETPU_HOME/fronts, HETPU_FRONT_CACHE=0
// to always search), HETPU_TRADEOFF (time | energy | slowdown<=X%, default
// slowdown<=5%), HETPU_BASE_POWER (watts, htpopta; default: the profile's base_power_w).
#include "sched_policies/pareto/pareto_policy.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>

#include "sched_policies/pareto/core/pareto_planner.h"
#include "sched_policies/pareto/core/profile_store.h"
#include "common/finite_number.h"
#include "common/settings.h"

namespace hetpu {

namespace {

std::unique_ptr<BlockPlanner> load_balanced_fallback(const char *policy, const std::vector<PlannerWorker> &workers,
                                                     const BlockRules &rules, const std::string &why)
{
    uint64_t block = 0;
    try {
        block = choose_fixed_block(rules, 0, static_cast<unsigned>(workers.size()));
    } catch (const std::invalid_argument &e) {
        std::fprintf(stderr, "hetpu: %s: %s\n", policy, e.what());
        return nullptr;
    }
    std::fprintf(stderr,
                 "hetpu: %s: %s; falling back to a load-balanced split (blocks of %llu elements, the first idle "
                 "worker takes the next)\n",
                 policy, why.c_str(), static_cast<unsigned long long>(block));
    return std::make_unique<FixedBlockPlanner>(block);
}

std::string join_shares(const std::vector<PlannerWorker> &workers, const ParetoPlan &plan)
{
    const std::vector<std::string> names = processor_names(workers);
    std::string s;
    for (std::size_t i = 0; i < workers.size(); ++i)
        s += (i ? " " : "") + names[i] + "=" + std::to_string(plan.shares[i]);
    return s;
}

}  // namespace

std::unique_ptr<BlockPlanner> make_pareto_policy_planner(const char *policy, EnergyObjective objective,
                                                         const std::vector<PlannerWorker> &workers,
                                                         const BlockRules &rules)
{
    const Settings settings;
    ParetoPlanOptions options;
    options.objective = objective;
    std::optional<double> base_power;
    bool use_cache = true;
    try {
        base_power = settings.number("HETPU_BASE_POWER");
        use_cache = settings.flag_or("HETPU_FRONT_CACHE", true);
        const std::optional<std::string> t = settings.text("HETPU_TRADEOFF");
        try {
            options.tradeoff = parse_tradeoff(t.value_or("slowdown<=5%"));
        } catch (const std::invalid_argument &e) {
            throw SettingError(std::string("HETPU_TRADEOFF: ") + e.what());
        }
    } catch (const SettingError &e) {
        std::fprintf(stderr, "hetpu: %s: %s\n", policy, e.what());
        return nullptr;
    }

    const std::string home = hetpu_home();
    const std::string path = profile_path(home, rules.job_name);
    if (path.empty())
        return load_balanced_fallback(policy, workers, rules,
                                      home.empty()
                                          ? "no HETPU_HOME or HOME to find profiles in"
                                          : "job '" + rules.job_name + "' has no name usable as a profile file name");
    struct stat st;
    if (stat(path.c_str(), &st) != 0)
        return load_balanced_fallback(policy, workers, rules,
                                      "no profiles for job '" + rules.job_name + "' at " + path +
                                          " (make them with: hetpu calibrate --app " + rules.job_name + ")");
    ProfileSet profiles;
    std::string profile_bytes;  // hashed for the front cache: exactly what was parsed
    try {
        std::ifstream in(path, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (!in || in.bad())
            throw ProfileCsvError(path + ": cannot read the profile file");
        profile_bytes = text.str();
        profiles = parse_profile_csv(profile_bytes, path);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hetpu: %s: %s\n", policy, e.what());
        return nullptr;
    }

    if (objective == EnergyObjective::Total) {
        if (base_power) {
            options.base_power_w = *base_power;
        } else if (profiles.base_power_w >= 0) {
            options.base_power_w = profiles.base_power_w;
        } else {
            std::fprintf(stderr,
                         "hetpu: %s: total energy needs the static power P_S: set HETPU_BASE_POWER=<watts> or "
                         "recalibrate so that %s has a '# base_power_w=' line\n",
                         policy, path.c_str());
            return nullptr;
        }
    }

    // The front depends only on the profile file's content and the job, so it is searched
    // once and read back by later runs (front_cache.h).
    const FrontCache cache(home + "/fronts", [policy](const std::string &line) {
        std::fprintf(stderr, "hetpu: %s: %s\n", policy, line.c_str());
    });
    if (use_cache) {
        options.cache = &cache;
        options.profile_path = path;
        options.profile_hash = content_hash(profile_bytes);
    }

    ParetoPlan plan;
    try {
        plan = make_pareto_plan(profiles, workers, rules, options);
    } catch (const std::exception &e) {
        return load_balanced_fallback(policy, workers, rules, rules.job_name + ": " + e.what());
    }
    for (const std::string &note : plan.notes)
        std::fprintf(stderr, "hetpu: %s: %s: %s\n", policy, rules.job_name.c_str(), note.c_str());
    const std::vector<std::string> sources = energy_sources(profiles);
    std::string src;
    for (const auto &s : sources)
        src += (src.empty() ? "" : "+") + s;
    std::fprintf(stderr,
                 "hetpu: %s: %s: point %zu of a %zu-point front (tradeoff %s): %s; predicted %.4g s, %.4g J %s "
                 "energy (source %s)%s\n",
                 policy, rules.job_name.c_str(), plan.chosen_index + 1, plan.front_size,
                 tradeoff_name(options.tradeoff).c_str(), join_shares(workers, plan).c_str(), plan.chosen.time_s,
                 objective == EnergyObjective::Dynamic ? plan.chosen.dynamic_energy_j : plan.chosen.total_energy_j,
                 objective == EnergyObjective::Dynamic ? "dynamic" : "total", src.empty() ? "unknown" : src.c_str(),
                 plan.cached ? "; front read from the cache" : "");
    return std::make_unique<ParetoPlanner>(policy, workers, plan.shares);
}

}  // namespace hetpu
