// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/sim_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "common/cli_args.h"
#include "common/json_line.h"
#include "common/settings.h"
#include "sched_policies/planner_catalog.h"
#include "tools/sim/scenario_profiles.h"
#include "tools/sim/sim_baselines.h"
#include "tools/sim/simulated_unit.h"
#include "tools/sim/simulator.h"

namespace hetpu::sim {

namespace {

struct Args {
    std::string scenario, policy, trace, plan_trace, models;
    bool starpu_calibrated = false;
    uint64_t seed = 1;
    uint64_t block = 0;
    bool json = false;
    bool planning_time = true;
    bool withdraw = true;
    double decision_us = -1, decision_per_unit_us = 0;
};

// The catalog's load-balancing policies, then the simulator's baselines.
std::vector<std::string> policy_names()
{
    std::vector<std::string> names;
    for (const PlannerPolicy &p : planner_policies())
        names.push_back(p.name);
    for (const std::string &b : baseline_names())
        names.push_back(b);
    return names;
}

// Names of the catalog's policies without a planner (fixed blocks).
std::string fixed_block_policies()
{
    std::string names;
    for (const PlannerPolicy &p : planner_policies())
        if (!p.make)
            names += (names.empty() ? "" : ", ") + p.name;
    return names;
}

std::string policy_help()
{
    return "a load-balancing policy: " + planner_policy_names(0, ", ") +
           " (each reads its HETPU_* settings; the first block is the scenario's x_init unless a setting names one; " +
           fixed_block_policies() + ": fixed blocks of --block, the first idle unit takes the next; " +
           planner_policy_names(kUsesProfiles, " and ") +
           ": from the profiles a calibration would measure on the scenario's units), or a baseline: " +
           baselines_help();
}

// "--option is for --policy a or b", from the policies that use what the option sets.
std::string only_for(const char *option, unsigned uses)
{
    return std::string(option) + " is for --policy " + planner_policy_names(uses, " or ");
}

void describe_options(CLI::App &app, Args &a)
{
    app.description("Simulate a block-planning policy on the machine a JSON scenario describes.");
    app.add_option("--scenario", a.scenario, "the scenario (units, time curves, transfers, noise)")
        ->required()
        ->type_name("FILE");
    app.add_option("--policy", a.policy, policy_help())
        ->required()
        ->type_name("NAME")
        ->check(CLI::IsMember(policy_names()));
    app.add_option("--seed", a.seed, "noise seed")->check(CLI::NonNegativeNumber);
    app.add_option("--block", a.block,
                   "the block size in elements of " + fixed_block_policies() +
                       " (default: the scenario's x_init, else workload / (4 * units))")
        ->check(CLI::PositiveNumber);
    app.add_flag("--json", a.json, "one JSON object instead of the human summary");
    app.add_option("--trace", a.trace, "write one JSON line per block (unit, offset, size, start, end)")
        ->type_name("FILE");
    app.add_option("--plan-trace", a.plan_trace,
                   planner_policy_names(kUsesTrace, ", ") +
                       " only: one JSON line per completed block with its phase, virtual step, predicted and measured "
                       "seconds (the same records as HETPU_TRACE)")
        ->type_name("FILE");
    app.add_flag("!--no-planning-time", a.planning_time,
                 "do not charge the planner's measured time to the units (charged, it delays the unit whose completion "
                 "ran it, and completions that come meanwhile wait for it, as under the runtime's one planner lock, "
                 "but for the unit's own refits). It is wall time: run with OPENBLAS_NUM_THREADS=1, as the bench "
                 "scripts do, or OpenBLAS's threads spinning after it loads share the planner's core");
    app.add_flag("!--no-withdraw", a.withdraw,
                 "handed-out blocks are committed once handed out (as for a job whose blocks do not run into private "
                 "output), instead of withdrawable until their unit takes them");
    app.add_option("--decision-cost-us", a.decision_us,
                   "charge every planning decision this many microseconds (plus --decision-cost-per-unit-us per unit) "
                   "instead of its wall time: the run then depends only on its inputs and seed")
        ->type_name("US")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--decision-cost-per-unit-us", a.decision_per_unit_us,
                   "with --decision-cost-us: microseconds more per simulated unit")
        ->type_name("US")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--models", a.models,
                   planner_policy_names(kUsesModels, ", ") +
                       " only: read the models of this scenario from DIR (as HETPU_HOME; job = the scenario's file "
                       "name, host \"sim\") and start from them; save the run's models there")
        ->type_name("DIR");
    app.add_flag("--starpu-calibrated", a.starpu_calibrated,
                 planner_policy_names(kUsesCodeletModel, ", ") +
                     " only: a first run on a node StarPU has calibrated (after dmda runs): with no saved models, "
                     "start from every unit's mean execution time of the fixed block (workload / (4 x units)) and of "
                     "the remainder, as StarPU's history model of the codelet holds them");
}

// What CLI11 cannot say: options that only some policies take. Throws CLI::ValidationError.
void check_args(const Args &a)
{
    const PlannerPolicy *p = find_planner_policy(a.policy);
    const unsigned uses = p ? p->uses : 0;
    if (!a.plan_trace.empty() && !(uses & kUsesTrace))
        throw CLI::ValidationError(only_for("--plan-trace", kUsesTrace));
    if (!a.models.empty() && !(uses & kUsesModels))
        throw CLI::ValidationError(only_for("--models", kUsesModels));
    if (a.starpu_calibrated && !(uses & kUsesCodeletModel))
        throw CLI::ValidationError(only_for("--starpu-calibrated", kUsesCodeletModel));
}

// A planner that learns online (LearningPlanner): how long its training took and whether it
// started from saved models.
struct LearningFacts {
    bool known = false;
    double training_s = 0;
    bool warm_started = false;
    unsigned solve_failures = 0;
};

std::string result_json(const SimResult &r, const Args &a, const Scenario &s, const LearningFacts &plb)
{
    JsonRecord j = {{"tool", "hetpu sim"}, {"scenario", a.scenario},       {"policy", r.policy},
                    {"seed", a.seed},      {"workload", s.workload},       {"makespan_s", r.makespan_s},
                    {"blocks", r.blocks},  {"planning_s", r.planning_s},   {"busy_end_s", r.busy_end_s},
                    {"copies", r.copies},  {"lost_copy_s", r.lost_copy_s}, {"withdrawn", r.withdrawn}};
    if (plb.known) {
        j["training_s"] = plb.training_s;
        j["warm_started"] = plb.warm_started;
        j["solve_failures"] = plb.solve_failures;
    }
    JsonRecord &units = j["units"] = JsonRecord::array();
    std::map<std::string, std::pair<double, double>> classes;  // class -> (idle, makespan-sum)
    for (const auto &u : r.units) {
        const double idle_pct = r.makespan_s > 0 ? 100.0 * u.idle_s / r.makespan_s : 0.0;
        units.push_back({{"name", u.name},
                         {"class", u.unit_class},
                         {"blocks", u.blocks},
                         {"elements", u.elements},
                         {"busy_s", u.busy_s},
                         {"idle_s", u.idle_s},
                         {"idle_pct", idle_pct}});
        classes[u.unit_class].first += u.idle_s;
        classes[u.unit_class].second += r.makespan_s;
    }
    JsonRecord &by_class = j["classes"] = JsonRecord::array();
    for (const auto &[name, v] : classes)
        by_class.push_back({{"class", name}, {"idle_pct", v.second > 0 ? 100.0 * v.first / v.second : 0.0}});
    return json_line(j);
}

void print_summary(const SimResult &r, const Scenario &s)
{
    std::printf("policy %s: makespan %.4f s, %u blocks, planner time %.4f s, workload %llu\n", r.policy.c_str(),
                r.makespan_s, r.blocks, r.planning_s, static_cast<unsigned long long>(s.workload));
    for (const auto &u : r.units)
        std::printf("  %-16s %-6s blocks %5u  elements %10llu  busy %9.4f s  idle %5.1f%%\n", u.name.c_str(),
                    u.unit_class.c_str(), u.blocks, static_cast<unsigned long long>(u.elements), u.busy_s,
                    r.makespan_s > 0 ? 100.0 * u.idle_s / r.makespan_s : 0.0);
}

// Writes the plan's trace lines to `path` (--plan-trace): the file is truncated once.
std::function<void(const std::string &)> plan_trace_to(const std::string &path)
{
    auto out = std::make_shared<std::ofstream>(path);
    if (!*out)
        return nullptr;
    return [out](const std::string &line) { *out << line << '\n'; };
}

// The context the simulated machine gives a planner family (planner_catalog.h).
PlannerContext sim_context(const PlannerPolicy &policy, const Args &a, const Scenario &scenario)
{
    PlannerContext context;
    context.policy = policy.name;
    context.say = [name = policy.name](const std::string &line) {
        std::fprintf(stderr, "hetpu sim: %s: %s\n", name.c_str(), line.c_str());
    };
    context.x_init = scenario.x_init;
    context.models_home = a.models;
    context.host = "sim";
    if (policy.uses & kUsesProfiles)
        context.profiles = scenario_profiles(scenario);
    return context;
}

// Runs a policy of the catalog; the exit status on failure (said on stderr), else 0.
int run_policy(const PlannerPolicy &policy, const Args &a, const Scenario &scenario, SimResult &result,
               LearningFacts &facts)
{
    SimOptions options{a.seed, a.planning_time, !a.trace.empty()};
    options.decision_base_s = a.decision_us < 0 ? -1 : a.decision_us * 1e-6;
    options.withdrawable = a.withdraw;
    options.decision_per_unit_s = a.decision_per_unit_us * 1e-6;
    BlockRules rules = block_rules(scenario);
    if (!policy.make) {
        uint64_t fixed = 0;
        try {
            fixed = choose_fixed_block(rules, a.block ? a.block : scenario.x_init,
                                       static_cast<unsigned>(scenario.units.size()));
        } catch (const std::invalid_argument &e) {
            std::fprintf(stderr, "hetpu sim: %s\n", e.what());
            return 2;
        }
        FixedBlockPlanner planner(fixed);
        result = simulate(scenario, planner, options);
        result.policy = policy.name;
        return 0;
    }
    rules.job_name = std::filesystem::path(a.scenario).stem().string();  // names the saved models
    if (a.starpu_calibrated) {
        // What the StarPU runner gets from StarPU (codelet_estimate.h): execution times only,
        // the mean over StarPU's samples, at the sizes dmda ran.
        const uint64_t fixed = choose_fixed_block(rules, 0, static_cast<unsigned>(scenario.units.size()));
        rules.calibrated_sizes = {fixed, rules.total % fixed};
        auto units = std::make_shared<std::vector<SimulatedUnit>>(scenario.units.begin(), scenario.units.end());
        rules.codelet_expected_s = [units](int worker, uint64_t x) {
            return units->at(static_cast<size_t>(worker)).exec_time(static_cast<double>(x));
        };
    }
    PlannerContext context = sim_context(policy, a, scenario);
    if (!a.plan_trace.empty() && !(context.trace = plan_trace_to(a.plan_trace))) {
        std::fprintf(stderr, "hetpu sim: cannot write the plan trace to '%s'\n", a.plan_trace.c_str());
        return 1;
    }
    std::unique_ptr<BlockPlanner> planner = policy.make(context, planner_workers(scenario), rules);
    if (!planner)
        return 2;
    result = simulate(scenario, *planner, options);
    result.policy = policy.name;
    if (const auto *learning = dynamic_cast<const LearningPlanner *>(planner.get()))
        facts = {true, learning->training_s(), learning->warm_started(), learning->solve_failures()};
    planner.reset();  // hands on what it learnt (saved models)
    return 0;
}

bool write_trace(const std::string &path, const SimResult &result, const Scenario &scenario)
{
    std::ofstream trace(path);
    if (!trace)
        return false;
    for (const auto &b : result.trace) {
        trace << json_line({{"policy", result.policy},
                            {"unit", scenario.units[b.unit].name},
                            {"offset", b.offset},
                            {"size", b.count},
                            {"start_s", b.start_s},
                            {"end_s", b.end_s}})
              << '\n';
    }
    return true;
}

}  // namespace

int sim_command(int argc, char **argv)
{
    Args a;
    CLI::App app{"", "hetpu sim"};
    describe_options(app, a);
    if (std::optional<int> rc = cli::parse_args(app, argc, argv))
        return *rc;
    try {
        check_args(a);
    } catch (const CLI::ValidationError &e) {
        std::fprintf(stderr, "hetpu sim: %s\nRun with --help for more information.\n", e.what());
        return 2;
    }
    Scenario scenario;
    try {
        scenario = load_scenario(a.scenario);
    } catch (const ScenarioError &e) {
        std::fprintf(stderr, "hetpu sim: %s\n", e.what());
        return 1;
    }

    SimResult result;
    LearningFacts facts;
    if (const PlannerPolicy *policy = find_planner_policy(a.policy)) {
        if (int rc = run_policy(*policy, a, scenario, result, facts))
            return rc;
    } else {
        try {
            result = run_baseline(a.policy, scenario, {a.seed, a.planning_time, !a.trace.empty()});
        } catch (const std::invalid_argument &e) {
            std::fprintf(stderr, "hetpu sim: --policy %s: %s\n", a.policy.c_str(), e.what());
            return 2;
        }
    }
    if (!a.trace.empty() && !write_trace(a.trace, result, scenario)) {
        std::fprintf(stderr, "hetpu sim: cannot write the trace to '%s'\n", a.trace.c_str());
        return 1;
    }
    if (a.json)
        std::printf("%s\n", result_json(result, a, scenario, facts).c_str());
    else {
        print_summary(result, scenario);
        if (facts.known)
            std::printf("  %s training: %.4f s%s\n", result.policy.c_str(), facts.training_s,
                        facts.warm_started ? " (started from saved models)" : "");
    }
    return 0;
}

}  // namespace hetpu::sim
