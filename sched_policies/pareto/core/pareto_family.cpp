// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/pareto_family.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sched_policies/pareto/core/front_cache.h"
#include "sched_policies/pareto/core/pareto_planner.h"
#include "sched_policies/pareto/core/profile_csv.h"
#include "sched_policies/pareto/core/profile_store.h"

namespace hetpu {

namespace {

std::unique_ptr<BlockPlanner> load_balanced_fallback(const PlannerContext &context,
                                                     const std::vector<PlannerWorker> &workers, const BlockRules &rules,
                                                     const std::string &why)
{
    uint64_t block = 0;
    try {
        block = choose_fixed_block(rules, 0, static_cast<unsigned>(workers.size()));
    } catch (const std::invalid_argument &e) {
        context.report(e.what());
        return nullptr;
    }
    context.report(why + "; falling back to a load-balanced split (blocks of " + std::to_string(block) +
                   " elements, the first idle worker takes the next)");
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

// The settings; false after saying what is wrong.
bool read_settings(const PlannerContext &context, ParetoPlanOptions &options, std::optional<double> &base_power,
                   bool &use_cache)
{
    const Settings settings(context.env);
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
        context.report(e.what());
        return false;
    }
    return true;
}

// The injected calibration as a profile set: processors named as `hetpu calibrate` names
// them, one point per measured size.
ProfileSet profiles_of(const CalibratedProfiles &c, const std::vector<PlannerWorker> &workers)
{
    ProfileSet set;
    set.base_power_w = c.base_power_w;
    const std::vector<std::string> names = processor_names(workers);
    for (std::size_t i = 0; i < workers.size(); ++i) {
        CsvProcessor p{names[i], {}};
        for (uint64_t x : c.sizes)
            p.points.push_back({x, c.time_s(workers[i].id, x), c.energy_j(workers[i].id, x), c.source, 0});
        set.processors.push_back(std::move(p));
    }
    return set;
}

// Where the profiles come from and what they hold.
struct LoadedProfiles {
    ProfileSet set;
    std::string path;   // the file ("" when injected)
    std::string bytes;  // the file's content, hashed for the front cache
};

enum class Load { Ok, Missing, Failed };

Load load_profiles(const PlannerContext &context, const BlockRules &rules, const std::vector<PlannerWorker> &workers,
                   LoadedProfiles &out, std::string &why)
{
    if (context.profiles) {
        out.set = profiles_of(*context.profiles, workers);
        return Load::Ok;
    }
    const std::string home = hetpu_home(context.env);
    out.path = profile_path(home, rules.job_name);
    if (out.path.empty()) {
        why = home.empty() ? "no HETPU_HOME or HOME to find profiles in"
                           : "job '" + rules.job_name + "' has no name usable as a profile file name";
        return Load::Missing;
    }
    struct stat st;
    if (stat(out.path.c_str(), &st) != 0) {
        why = "no profiles for job '" + rules.job_name + "' at " + out.path +
              " (make them with: hetpu calibrate --app " + rules.job_name + ")";
        return Load::Missing;
    }
    try {
        std::ifstream in(out.path, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (!in || in.bad())
            throw ProfileCsvError(out.path + ": cannot read the profile file");
        out.bytes = text.str();
        out.set = parse_profile_csv(out.bytes, out.path);
    } catch (const std::exception &e) {
        context.report(e.what());
        return Load::Failed;
    }
    return Load::Ok;
}

std::string sources_of(const ProfileSet &profiles)
{
    std::string src;
    for (const auto &s : energy_sources(profiles))
        src += (src.empty() ? "" : "+") + s;
    return src.empty() ? "unknown" : src;
}

std::unique_ptr<BlockPlanner> make_pareto_family(EnergyObjective objective, const PlannerContext &context,
                                                 const std::vector<PlannerWorker> &workers, const BlockRules &rules)
{
    ParetoPlanOptions options;
    options.objective = objective;
    std::optional<double> base_power;
    bool use_cache = true;
    if (!read_settings(context, options, base_power, use_cache))
        return nullptr;
    LoadedProfiles profiles;
    std::string why;
    switch (load_profiles(context, rules, workers, profiles, why)) {
    case Load::Missing: return load_balanced_fallback(context, workers, rules, why);
    case Load::Failed: return nullptr;
    case Load::Ok: break;
    }
    if (objective == EnergyObjective::Total) {
        if (base_power) {
            options.base_power_w = *base_power;
        } else if (profiles.set.base_power_w >= 0) {
            options.base_power_w = profiles.set.base_power_w;
        } else {
            context.report("total energy needs the static power P_S: set HETPU_BASE_POWER=<watts> or recalibrate so "
                           "that " +
                           (profiles.path.empty() ? context.profiles->source : profiles.path) +
                           " has a '# base_power_w=' line");
            return nullptr;
        }
    }
    // The front depends only on the profile file's content and the job, so it is searched
    // once and read back by later runs (front_cache.h).
    const FrontCache cache(hetpu_home(context.env) + "/fronts",
                           [&context](const std::string &line) { context.report(line); });
    if (use_cache && !profiles.path.empty()) {
        options.cache = &cache;
        options.profile_path = profiles.path;
        options.profile_hash = content_hash(profiles.bytes);
    }
    ParetoPlan plan;
    try {
        plan = make_pareto_plan(profiles.set, workers, rules, options);
    } catch (const std::exception &e) {
        return load_balanced_fallback(context, workers, rules, rules.job_name + ": " + e.what());
    }
    for (const std::string &note : plan.notes)
        context.report(rules.job_name + ": " + note);
    char figures[256];
    std::snprintf(figures, sizeof figures, "predicted %.4g s, %.4g J %s energy", plan.chosen.time_s,
                  objective == EnergyObjective::Dynamic ? plan.chosen.dynamic_energy_j : plan.chosen.total_energy_j,
                  objective == EnergyObjective::Dynamic ? "dynamic" : "total");
    context.report(rules.job_name + ": point " + std::to_string(plan.chosen_index + 1) + " of a " +
                   std::to_string(plan.front_size) + "-point front (tradeoff " + tradeoff_name(options.tradeoff) +
                   "): " + join_shares(workers, plan) + "; " + figures + " (source " + sources_of(profiles.set) + ")" +
                   (plan.cached ? "; front read from the cache" : ""));
    return std::make_unique<ParetoPlanner>(context.policy, workers, plan.shares);
}

}  // namespace

std::unique_ptr<BlockPlanner> make_hepopta_family(const PlannerContext &context,
                                                  const std::vector<PlannerWorker> &workers, const BlockRules &rules)
{
    return make_pareto_family(EnergyObjective::Dynamic, context, workers, rules);
}

std::unique_ptr<BlockPlanner> make_htpopta_family(const PlannerContext &context,
                                                  const std::vector<PlannerWorker> &workers, const BlockRules &rules)
{
    return make_pareto_family(EnergyObjective::Total, context, workers, rules);
}

}  // namespace hetpu
