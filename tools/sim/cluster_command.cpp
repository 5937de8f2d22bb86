// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/cluster_command.h"

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "common/cli_args.h"
#include "common/json_line.h"
#include "common/settings.h"
#include "sched_policies/hdss/core/hdss_planner.h"
#include "sched_policies/plbhac/core/plbhac_planner.h"
#include "tools/sim/cluster_sim.h"

namespace hetpu::sim {

namespace {

struct Args {
    std::string cluster, policy, mode;
    uint64_t seed = 1;
    bool json = false;
    bool planning_time = true;
    bool known_rates = false;
};

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
    app.add_option("--policy", a.policy, "the planner: plb-hac (reads HETPU_PLBHAC_*), hdss or greedy")
        ->required()
        ->type_name("NAME")
        ->check(CLI::IsMember({"plb-hac", "hdss", "greedy"}));
    app.add_option("--mode", a.mode, "central or per-node")
        ->required()
        ->type_name("MODE")
        ->check(CLI::IsMember({"central", "per-node"}));
    app.add_option("--seed", a.seed, "noise seed")->check(CLI::NonNegativeNumber);
    app.add_flag("--known-rates", a.known_rates,
                 "per-node: initial shares from the nodes' speeds, as after a first run (default: their PU counts)");
    app.add_flag("!--no-planning-time", a.planning_time, "do not charge the planners' measured time");
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
    PlbhacOptions plb;
    plb.x_init = cluster.x_init;
    try {
        plbhac_options_from_env(plb, process_env);
    } catch (const PlbhacInputError &e) {
        std::fprintf(stderr, "hetpu cluster-sim: %s\n", e.what());
        return 2;
    }
    const uint64_t job_total = cluster.workload;
    PlannerMaker make = [&](const std::vector<PlannerWorker> &workers,
                            const BlockRules &rules) -> std::unique_ptr<BlockPlanner> {
        if (a.policy == "plb-hac")
            return std::make_unique<PlbhacPlanner>(workers, rules, plb);
        if (a.policy == "hdss") {
            HdssOptions h;
            h.x_init = cluster.x_init;
            return std::make_unique<HdssPlanner>(workers, rules, h);
        }
        BlockRules job = rules;
        job.total = job_total;  // fixed blocks keep the job's size, whatever the share
        return std::make_unique<FixedBlockPlanner>(
            choose_fixed_block(job, cluster.x_init, static_cast<unsigned>(workers.size())));
    };
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
                                       {"coordinator_s", r.coordinator_s},
                                       {"coordinator_calls", r.coordinator_calls},
                                       {"rank0_bytes", r.rank0_bytes},
                                       {"moved_bytes", r.moved_bytes},
                                       {"redone_elements", r.redone_elements}})
                                .c_str());
        return 0;
    }
    std::printf("%s %s on %u nodes (%u PUs): makespan %.3f s, %.3f x the bound (%.3f s)\n", r.mode.c_str(),
                a.policy.c_str(), r.nodes, r.pus, r.makespan_s, r.bound_s > 0 ? r.makespan_s / r.bound_s : 0.0,
                r.bound_s);
    std::printf("  %u blocks, %u moves; planners %.3f s, coordinator %.4f s in %u decisions\n", r.blocks, r.moves,
                r.planning_s, r.coordinator_s, r.coordinator_calls);
    std::printf("  job data through rank 0: %.3g bytes (%.3g bytes/s); moved between nodes: %.3g bytes\n",
                r.rank0_bytes, r.makespan_s > 0 ? r.rank0_bytes / r.makespan_s : 0.0, r.moved_bytes);
    if (r.redone_elements)
        std::printf("  %llu elements computed again after failures\n",
                    static_cast<unsigned long long>(r.redone_elements));
    return 0;
}

}  // namespace hetpu::sim
