// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/cluster_command.h"

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "common/cli_args.h"
#include "common/json_line.h"
#include "common/settings.h"
#include "sched_policies/planner_catalog.h"
#include "tools/sim/cluster_sim.h"
#include "tools/sim/scenario_profiles.h"

namespace hetpu::sim {

namespace {

struct Args {
    std::string cluster, policy, mode;
    uint64_t seed = 1;
    bool json = false;
    bool planning_time = true;
    bool known_rates = false;
};

std::vector<std::string> policy_names()
{
    std::vector<std::string> names;
    for (const PlannerPolicy &p : planner_policies())
        names.push_back(p.name);
    return names;
}

// The profiles a calibration would measure on these PUs for this share (scenario_profiles.h).
std::shared_ptr<const CalibratedProfiles>
profiles_of(const ClusterScenario &cluster, const std::vector<PlannerWorker> &workers, const BlockRules &rules)
{
    Scenario s;
    s.workload = rules.total;
    s.granule = rules.granule;
    for (const PlannerWorker &w : workers)
        for (const ClusterNode &n : cluster.nodes)
            for (const UnitSpec &u : n.units)
                if (u.name == w.name)
                    s.units.push_back(u);
    return scenario_profiles(s);
}

// Builds the policy's planner for a node's PUs (or all of them); throws std::invalid_argument
// when the family refuses (it said why).
PlannerMaker planner_maker(const PlannerPolicy &policy, const ClusterScenario &cluster)
{
    return [&policy, &cluster](const std::vector<PlannerWorker> &workers,
                               const BlockRules &rules) -> std::unique_ptr<BlockPlanner> {
        if (!policy.make) {
            BlockRules job = rules;
            job.total = cluster.workload;  // fixed blocks keep the job's size, whatever the share
            return std::make_unique<FixedBlockPlanner>(
                choose_fixed_block(job, cluster.x_init, static_cast<unsigned>(workers.size())));
        }
        PlannerContext context;
        context.policy = policy.name;
        context.say = [name = policy.name](const std::string &line) {
            std::fprintf(stderr, "hetpu cluster-sim: %s: %s\n", name.c_str(), line.c_str());
        };
        context.x_init = cluster.x_init;
        if (policy.uses & kUsesProfiles)
            context.profiles = profiles_of(cluster, workers, rules);
        std::unique_ptr<BlockPlanner> planner = policy.make(context, workers, rules);
        if (!planner)
            throw std::invalid_argument("no " + policy.name + " planner (see above)");
        return planner;
    };
}

}  // namespace

int cluster_sim_command(int argc, char **argv)
{
    Args a;
    CLI::App app{"", "hetpu cluster-sim"};
    app.description("Simulate a divisible job on a cluster described in JSON, the network charged: one planner for "
                    "every PU with the data relayed through rank 0 (central), or a planner per node under a "
                    "coordinator that re-shares between nodes (per-node).");
    app.add_option("--cluster", a.cluster, "the cluster (node types, nodes, links, the job)")
        ->required()
        ->type_name("FILE");
    app.add_option("--policy", a.policy,
                   "the load-balancing policy, " + planner_policy_names(0, ", ") +
                       " (each reads its HETPU_* settings; the first block is the cluster's x_init unless a setting "
                       "names one)")
        ->required()
        ->type_name("NAME")
        ->check(CLI::IsMember(policy_names()));
    app.add_option("--mode", a.mode, "central or per-node")
        ->required()
        ->type_name("MODE")
        ->check(CLI::IsMember({"central", "per-node"}));
    app.add_option("--seed", a.seed, "noise seed")->check(CLI::NonNegativeNumber);
    app.add_flag("--known-rates", a.known_rates,
                 "per-node: initial shares from the nodes' speeds, as after a first run (default: from their units' "
                 "calibrated kinds)");
    app.add_flag("!--no-planning-time", a.planning_time,
                 "do not charge the planners' and the coordinator's modelled time");
    app.add_flag("--json", a.json, "one JSON object instead of the human summary");
    if (std::optional<int> rc = cli::parse_args(app, argc, argv))
        return *rc;

    ClusterScenario cluster;
    try {
        cluster = load_cluster(a.cluster);
    } catch (const ScenarioError &e) {
        std::fprintf(stderr, "hetpu cluster-sim: %s\n", e.what());
        return 1;
    }
    const PlannerMaker make = planner_maker(*find_planner_policy(a.policy), cluster);
    ClusterOptions options;
    options.seed = a.seed;
    options.charge_planning_time = a.planning_time;
    options.known_rates = a.known_rates;
    ClusterResult r;
    try {
        r = simulate_cluster(cluster, a.mode == "central" ? ClusterMode::Central : ClusterMode::PerNode, make, options);
    } catch (const std::invalid_argument &e) {
        std::fprintf(stderr, "hetpu cluster-sim: %s\n", e.what());
        return 2;
    }
    if (a.json) {
        std::printf("%s\n", json_line({{"tool", "hetpu cluster-sim"},
                                       {"cluster", a.cluster},
                                       {"policy", a.policy},
                                       {"mode", r.mode},
                                       {"known_rates", a.known_rates},
                                       {"seed", a.seed},
                                       {"nodes", r.nodes},
                                       {"pus", r.pus},
                                       {"workload", cluster.workload},
                                       {"makespan_s", r.makespan_s},
                                       {"bound_s", r.bound_s},
                                       {"blocks", r.blocks},
                                       {"moves", r.moves},
                                       {"planning_s", r.planning_s},
                                       {"planning_wall_s", r.planning_wall_s},
                                       {"coordinator_s", r.coordinator_s},
                                       {"coordinator_wall_s", r.coordinator_wall_s},
                                       {"coordinator_calls", r.coordinator_calls},
                                       {"reports", r.reports},
                                       {"rank0_bytes", r.rank0_bytes},
                                       {"moved_bytes", r.moved_bytes},
                                       {"redone_elements", r.redone_elements}})
                                .c_str());
        return 0;
    }
    std::printf("%s %s on %u nodes (%u PUs): makespan %.3f s, %.3f x the bound (%.3f s)\n", r.mode.c_str(),
                a.policy.c_str(), r.nodes, r.pus, r.makespan_s, r.bound_s > 0 ? r.makespan_s / r.bound_s : 0.0,
                r.bound_s);
    std::printf("  %u blocks, %u moves; planners %.3f s (%.3f s measured), coordinator %.4f s (%.4f s measured) for "
                "%llu reports and %u rounds\n",
                r.blocks, r.moves, r.planning_s, r.planning_wall_s, r.coordinator_s, r.coordinator_wall_s,
                static_cast<unsigned long long>(r.reports), r.coordinator_calls);
    std::printf("  job data through rank 0: %.3g bytes (%.3g bytes/s); moved between nodes: %.3g bytes\n",
                r.rank0_bytes, r.makespan_s > 0 ? r.rank0_bytes / r.makespan_s : 0.0, r.moved_bytes);
    if (r.redone_elements)
        std::printf("  %llu elements computed again after failures\n",
                    static_cast<unsigned long long>(r.redone_elements));
    return 0;
}

}  // namespace hetpu::sim
