// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu su` dispatch plus the two small subcommands, rate and charge. compare and report
// live in their own files.
#include "tools/su/su_command.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "accounting_hook/core/partition_config.h"
#include "accounting_hook/core/slurm_billing.h"
#include "accounting_hook/core/su_model.h"
#include "common/cli_args.h"
#include "tools/su/su_compare.h"
#include "tools/su/su_options.h"
#include "tools/su/su_report.h"

namespace hetpu::su {

namespace {

using namespace hetpu::accounting;

const OptionSpec config_option{"config", "FILE", "the partitions' TOML description (required)"};
const OptionSpec json_option{"json", "", "one JSON line per result instead of a table"};

int rate(int argc, char **argv)
{
    Options o("rate", argc, argv,
              {config_option, {"partition", "NAME", "only this partition (default: all)"}, json_option},
              "SU per node-hour of each partition (Eq. 15 of the accounting paper) and the Slurm "
              "TRESBillingWeights that charge the same under PriorityFlags=MAX_TRES.");
    AccountingConfig cfg = load_accounting_config(o.required("config"));
    std::vector<Partition> shown;
    if (o.has("partition"))
        shown.push_back(cfg.choose(o.get("partition")));
    else
        shown = cfg.partitions;
    if (!o.has("json"))
        std::printf("%-12s %-28s %14s  %s\n", "partition", "node", "SU/node-hour",
                    "Slurm equivalent (PriorityFlags=MAX_TRES)");
    for (const Partition &p : shown) {
        const double w = energy_weight(p);
        const std::string tres = format_tres_billing_weights(equivalent_tres_weights(p));
        if (o.has("json")) {
            nlohmann::json j = {{"partition", p.name},
                                {"su_per_node_hour", w},
                                {"cores_per_node", p.cores_per_node},
                                {"mem_gib_per_node", p.mem_gib_per_node},
                                {"gpus_per_node", p.gpus_per_node},
                                {"tres_billing_weights_equivalent", tres}};
            if (!p.tres_billing_weights.empty()) {
                TresWeights cur = parse_tres_billing_weights(p.tres_billing_weights);
                j["current_tres_billing_weights"] = p.tres_billing_weights;
                j["current_su_per_node_hour"] =
                    slurm_billing(cur, p.cores_per_node, p.mem_gib_per_node, p.gpus_per_node, true);
            }
            std::printf("%s\n", j.dump().c_str());
            continue;
        }
        char node[64];
        std::snprintf(node, sizeof node, "%d cores, %g GiB, %d GPUs", p.cores_per_node, p.mem_gib_per_node,
                      p.gpus_per_node);
        std::printf("%-12s %-28s %14.6g  TRESBillingWeights=\"%s\"\n", p.name.c_str(), node, w, tres.c_str());
        if (!p.tres_billing_weights.empty()) {
            TresWeights cur = parse_tres_billing_weights(p.tres_billing_weights);
            std::printf("%-12s current scheme \"%s\": %.6g per full node-hour (MAX_TRES)\n", "",
                        p.tres_billing_weights.c_str(),
                        slurm_billing(cur, p.cores_per_node, p.mem_gib_per_node, p.gpus_per_node, true));
        }
    }
    return 0;
}

int charge(int argc, char **argv)
{
    Options o("charge", argc, argv,
              {config_option,
               {"partition", "NAME", "the partition the job ran on (required)"},
               {"nodes", "N", "nodes held (required, >= 1)"},
               {"cores", "C", "cores held on each node (required)"},
               {"mem-gib", "M", "GiB of memory held on each node (required)"},
               {"gpus", "G", "GPUs held on each node (required)"},
               {"hours", "H", "wall time in hours (required)"},
               json_option},
              "The charge of one job holding C cores, M GiB and G GPUs on each of N nodes for H hours.");
    AccountingConfig cfg = load_accounting_config(o.required("config"));
    const Partition &p = cfg.choose(o.required("partition"));
    const int nodes = o.count("nodes", 1);
    const double cores = o.number("cores", 0), mem = o.number("mem-gib", 0), gpus = o.number("gpus", 0);
    const double hours = o.number("hours", 0);
    NodeFractions f;
    try {
        f = node_fractions(p, cores, gpus, mem);
    } catch (const std::invalid_argument &e) {
        throw UsageError(e.what());
    }
    const double w = energy_weight(p);
    const double su = cost(w, hours, f, nodes);
    nlohmann::json j = {
        {"su", su},       {"fractions", {{"cores", f.cores}, {"gpus", f.gpus}, {"memory", f.memory}, {"max", f.max()}}},
        {"rate", w},      {"partition", p.name},
        {"nodes", nodes}, {"hours", hours}};
    double slurm_current = -1;
    if (!p.tres_billing_weights.empty()) {
        slurm_current =
            slurm_billing(parse_tres_billing_weights(p.tres_billing_weights), cores, mem, gpus, true) * hours * nodes;
        j["slurm_current_su"] = slurm_current;
    }
    if (o.has("json")) {
        std::printf("%s\n", j.dump().c_str());
        return 0;
    }
    std::printf("partition %s: %g SU per node-hour\n", p.name.c_str(), w);
    std::printf("per node: cores %g/%d = %.4g, GPUs %g/%d = %.4g, memory %g GiB = %.4g (whole %g GiB shares)\n", cores,
                p.cores_per_node, f.cores, gpus, p.gpus_per_node, f.gpus, mem, f.memory,
                p.mem_gib_per_node / p.cores_per_node);
    std::printf("charge: %g x %g h x %d node%s x %.4g = %.6g SU\n", w, hours, nodes, nodes == 1 ? "" : "s", f.max(),
                su);
    if (slurm_current >= 0)
        std::printf("current scheme (\"%s\", MAX_TRES): %.6g SU\n", p.tres_billing_weights.c_str(), slurm_current);
    return 0;
}

}  // namespace

int su_command(int argc, char **argv)
{
    // Usage errors exit 2 with the subcommand named, other failures (a bad file) 1.
    auto guarded = [](const char *name, int (*run)(int, char **)) {
        return [name, run](int n, char **args) {
            try {
                return run(n, args);
            } catch (const HelpRequested &e) {
                std::fputs(e.what(), stdout);
                return 0;
            } catch (const UsageError &e) {
                std::fprintf(stderr, "hetpu su %s: %s\nRun 'hetpu su %s --help' for its options.\n", name, e.what(),
                             name);
                return 2;
            } catch (const std::exception &e) {
                std::fprintf(stderr, "hetpu su %s: %s\n", name, e.what());
                return 1;
            }
        };
    };
    return cli::run_subcommand(
        "hetpu su", "Service units: energy-based rates and charges, charging models compared, the ledger.",
        {{"rate", "SU per node-hour of each partition and the equivalent Slurm TRESBillingWeights",
          guarded("rate", rate)},
         {"charge", "the charge of one job holding cores, memory and GPUs on N nodes", guarded("charge", charge)},
         {"compare", "SM-based, peak-performance and energy-based GPU charges side by side",
          guarded("compare", compare_command)},
         {"report", "the runs the accounting hook recorded in the ledger", guarded("report", report_command)}},
        argc, argv);
}

}  // namespace hetpu::su
