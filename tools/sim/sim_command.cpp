// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/sim_command.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "common/json_line.h"
#include "common/cli_args.h"
#include "common/settings.h"
#include "sched_policies/hdss/core/hdss_planner.h"
#include "sched_policies/plbhac/core/plbhac_codelet_start.h"
#include "sched_policies/plbhac/core/plbhac_model_store.h"
#include "sched_policies/plbhac/core/plbhac_planner.h"
#include "tools/sim/optimum.h"
#include "tools/sim/static_planner.h"
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
};

void describe_options(CLI::App &app, Args &a)
{
    app.description("Simulate a block-planning policy on the machine a JSON scenario describes.");
    app.add_option("--scenario", a.scenario, "the scenario (units, time curves, transfers, noise)")
        ->required()
        ->type_name("FILE");
    app.add_option("--policy", a.policy,
                   "plb-hac, hdss, greedy (fixed blocks, first idle unit takes the next), optimum (best static "
                   "distribution, exact at granule resolution, noise-free) or optimum-noisy (that distribution, one "
                   "block per unit, run with the seed's noise and the slowdowns), best-single-kind (the optimum over "
                   "the one unit kind that finishes first alone, the others idle, run noisy as optimum-noisy); plb-hac "
                   "reads HETPU_PLBHAC_*, its x_init and hdss's are the scenario's")
        ->required()
        ->type_name("NAME")
        ->check(CLI::IsMember({"plb-hac", "hdss", "greedy", "optimum", "optimum-noisy", "best-single-kind"}));
    app.add_option("--seed", a.seed, "noise seed")->check(CLI::NonNegativeNumber);
    app.add_option("--block", a.block,
                   "greedy's block size in elements (default: the scenario's x_init, else workload / (4 * units))")
        ->check(CLI::PositiveNumber);
    app.add_flag("--json", a.json, "one JSON object instead of the human summary");
    app.add_option("--trace", a.trace, "write one JSON line per block (unit, offset, size, start, end)")
        ->type_name("FILE");
    app.add_option("--plan-trace", a.plan_trace,
                   "plb-hac only: one JSON line per completed block with its phase, virtual step, predicted and "
                   "measured seconds (the same records as HETPU_TRACE)")
        ->type_name("FILE");
    app.add_flag("!--no-planning-time", a.planning_time,
                 "do not charge the planner's measured time to the units (charged, it delays the unit whose completion "
                 "ran it, and completions that come meanwhile wait for it, as under the runtime's one planner lock, "
                 "but for the unit's own refits). It is wall time: run with OPENBLAS_NUM_THREADS=1, as the bench "
                 "scripts do, or OpenBLAS's threads spinning after it loads share the planner's core");
    app.add_option("--models", a.models,
                   "plb-hac only: read the models of this scenario from DIR/plbhac-models (as HETPU_HOME; job = "
                   "the scenario's file name, host \"sim\") and start from them; save the run's models there")
        ->type_name("DIR");
    app.add_flag("--starpu-calibrated", a.starpu_calibrated,
                 "plb-hac only: a first run on a node StarPU has calibrated (after dmda runs): with no saved models, "
                 "start from every unit's mean execution time of the fixed block (workload / (4 x units)) and of "
                 "the remainder, as StarPU's history model of the codelet holds them");
}

// What CLI11 cannot say: options that only one policy takes. Throws CLI::ValidationError.
void check_args(const Args &a)
{
    if (!a.plan_trace.empty() && a.policy != "plb-hac")
        throw CLI::ValidationError("--plan-trace is for --policy plb-hac");
    if (!a.models.empty() && a.policy != "plb-hac")
        throw CLI::ValidationError("--models is for --policy plb-hac");
    if (a.starpu_calibrated && a.policy != "plb-hac")
        throw CLI::ValidationError("--starpu-calibrated is for --policy plb-hac");
}

// plb-hac only: how long its training took and whether it started from saved models.
struct PlbhacFacts {
    bool known = false;
    double training_s = 0;
    bool warm_started = false;
    unsigned solve_failures = 0;
};

std::string result_json(const SimResult &r, const Args &a, const Scenario &s, const PlbhacFacts &plb)
{
    JsonRecord j = {{"tool", "hetpu sim"}, {"scenario", a.scenario},    {"policy", r.policy},
                    {"seed", a.seed},      {"workload", s.workload},    {"makespan_s", r.makespan_s},
                    {"blocks", r.blocks},  {"planning_s", r.planning_s}};
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

    std::vector<SimulatedUnit> units(scenario.units.begin(), scenario.units.end());
    SimResult result;
    PlbhacFacts plb_facts;
    if (a.policy == "optimum" || a.policy == "optimum-noisy") {
        try {
            check_optimum_job(units.size(), scenario.workload, scenario.granule);
        } catch (const std::invalid_argument &e) {
            std::fprintf(stderr, "hetpu sim: --policy %s: %s\n", a.policy.c_str(), e.what());
            return 2;
        }
        const StaticDistribution best = optimum_distribution(units, scenario.workload, scenario.granule);
        if (a.policy == "optimum") {
            result = simulate_static(scenario, best, "optimum");
        } else {
            StaticPlanner planner("optimum-noisy", best.blocks);
            result = simulate(scenario, planner, {a.seed, a.planning_time, !a.trace.empty()});
        }
    } else if (a.policy == "best-single-kind") {
        // What a user gets by running on the fastest kind of unit alone (the GPU alone):
        // the exact optimum over that kind's units, every other unit idle.
        std::map<std::string, std::vector<size_t>> kinds;
        for (size_t i = 0; i < units.size(); ++i)
            kinds[scenario.units[i].unit_class].push_back(i);
        std::vector<uint64_t> blocks;
        double best_s = std::numeric_limits<double>::infinity();
        std::string best_kind;
        try {
            for (const auto &[kind, members] : kinds) {
                std::vector<SimulatedUnit> subset;
                for (size_t i : members)
                    subset.push_back(units[i]);
                check_optimum_job(subset.size(), scenario.workload, scenario.granule);
                const StaticDistribution d = optimum_distribution(subset, scenario.workload, scenario.granule);
                if (d.makespan_s < best_s) {
                    best_s = d.makespan_s;
                    best_kind = kind;
                    blocks.assign(units.size(), 0);
                    for (size_t j = 0; j < members.size(); ++j)
                        blocks[members[j]] = d.blocks[j];
                }
            }
        } catch (const std::invalid_argument &e) {
            std::fprintf(stderr, "hetpu sim: --policy %s: %s\n", a.policy.c_str(), e.what());
            return 2;
        }
        StaticPlanner planner("best-single-kind:" + best_kind, blocks);
        result = simulate(scenario, planner, {a.seed, a.planning_time, !a.trace.empty()});
    } else if (a.policy == "greedy") {
        uint64_t block = a.block ? a.block : scenario.x_init;
        BlockRules rules = block_rules(scenario);
        uint64_t fixed = 0;
        try {
            fixed = choose_fixed_block(rules, block, static_cast<unsigned>(units.size()));
        } catch (const std::invalid_argument &e) {
            std::fprintf(stderr, "hetpu sim: %s\n", e.what());
            return 2;
        }
        FixedBlockPlanner planner(fixed);
        result = simulate(scenario, planner, {a.seed, a.planning_time, !a.trace.empty()});
        result.policy = "greedy";
    } else if (a.policy == "plb-hac") {
        PlbhacOptions options;
        options.x_init = scenario.x_init;
        try {
            plbhac_options_from_env(options, process_env);
        } catch (const PlbhacInputError &e) {
            std::fprintf(stderr, "hetpu sim: %s\n", e.what());
            return 2;
        }
        // Saved models: the same store and key shape as the StarPU glue (plbhac.cpp).
        const PlbhacModelKey key = plbhac_model_key(std::filesystem::path(a.scenario).stem().string(),
                                                    scenario.workload, "sim", planner_workers(scenario));
        const std::string models_path = a.models.empty() ? "" : plbhac_model_path(a.models, key);
        unsigned runs = 0;
        if (!a.models.empty()) {
            if (models_path.empty()) {
                std::fprintf(stderr, "hetpu sim: the scenario's file name cannot name a models file\n");
                return 2;
            }
            options.memory = std::make_shared<PlbhacMemory>();
            std::string warning;
            if (auto f = load_plbhac_models(models_path, key, warning)) {
                options.memory->pus = f->memory.pus;
                runs = f->runs;
            } else if (!warning.empty()) {
                std::fprintf(stderr, "hetpu sim: %s\n", warning.c_str());
            }
            options.on_learnt = [&](const PlbhacMemory &m) {
                PlbhacModelFile f{key, runs + 1, static_cast<double>(std::time(nullptr)), m};
                try {
                    save_plbhac_models(models_path, f);
                } catch (const std::exception &e) {
                    std::fprintf(stderr, "hetpu sim: models not saved: %s\n", e.what());
                }
            };
        }
        BlockRules rules = block_rules(scenario);
        if (a.starpu_calibrated) {
            // What plbhac.cpp gets from StarPU (codelet_estimate.h): execution times only, the
            // mean over StarPU's samples, at the sizes dmda ran.
            const uint64_t fixed = choose_fixed_block(rules, 0, static_cast<unsigned>(units.size()));
            rules.calibrated_sizes = {fixed, rules.total % fixed};
            rules.codelet_expected_s = [&units](int worker, uint64_t x) {
                return units.at(static_cast<size_t>(worker)).exec_time(static_cast<double>(x));
            };
            if (!options.memory)
                options.memory = std::make_shared<PlbhacMemory>();
            if (options.memory->pus.empty())
                plbhac_memory_from_codelet_model(planner_workers(scenario), rules, *options.memory);
        }
        auto planner_ptr = std::make_unique<PlbhacPlanner>(planner_workers(scenario), rules, options);
        PlbhacPlanner &planner = *planner_ptr;
        std::ofstream plan_trace;
        if (!a.plan_trace.empty()) {
            plan_trace.open(a.plan_trace);
            if (!plan_trace) {
                std::fprintf(stderr, "hetpu sim: cannot write the plan trace to '%s'\n", a.plan_trace.c_str());
                return 1;
            }
            planner.on_trace = [&plan_trace](const PlbhacTraceRecord &r) {
                plan_trace << plbhac_trace_json(r) << '\n';
            };
        }
        result = simulate(scenario, planner, {a.seed, a.planning_time, !a.trace.empty()});
        plb_facts = {true, planner.training_s(), planner.warm_started(), planner.solve_failures()};
        planner_ptr.reset();  // saves the models (on_learnt)
    } else if (a.policy == "hdss") {
        HdssOptions options;
        options.x_init = scenario.x_init;
        HdssPlanner planner(planner_workers(scenario), block_rules(scenario), options);
        result = simulate(scenario, planner, {a.seed, a.planning_time, !a.trace.empty()});
    } else {
        std::fprintf(
            stderr,
            "hetpu sim: unknown policy '%s' (known: plb-hac, hdss, greedy, optimum, optimum-noisy, best-single-kind)\n",
            a.policy.c_str());
        return 2;
    }

    if (!a.trace.empty()) {
        std::ofstream trace(a.trace);
        if (!trace) {
            std::fprintf(stderr, "hetpu sim: cannot write the trace to '%s'\n", a.trace.c_str());
            return 1;
        }
        for (const auto &b : result.trace) {
            trace << json_line({{"policy", result.policy},
                                {"unit", scenario.units[b.unit].name},
                                {"offset", b.offset},
                                {"size", b.count},
                                {"start_s", b.start_s},
                                {"end_s", b.end_s}})
                  << '\n';
        }
    }
    if (a.json)
        std::printf("%s\n", result_json(result, a, scenario, plb_facts).c_str());
    else {
        print_summary(result, scenario);
        if (plb_facts.known)
            std::printf("  plb-hac training: %.4f s%s\n", plb_facts.training_s,
                        plb_facts.warm_started ? " (started from saved models)" : "");
    }
    return 0;
}

}  // namespace hetpu::sim
