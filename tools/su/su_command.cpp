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
#include "tools/su/su_compare.h"
#include "tools/su/su_options.h"
#include "tools/su/su_report.h"

namespace hetpu::su {

namespace {

using namespace hetpu::accounting;

const char *usage_text =
    "usage: hetpu su <subcommand> [options]\n"
    "  rate    --config FILE [--partition NAME] [--json]\n"
    "          SU per node-hour of each partition (Eq. 15) and the Slurm TRESBillingWeights\n"
    "          that charge the same under PriorityFlags=MAX_TRES\n"
    "  charge  --config FILE --partition NAME --nodes N --cores C --mem-gib M --gpus G --hours H [--json]\n"
    "          the charge of one job holding C cores, M GiB and G GPUs on each of N nodes\n"
    "  compare --config FILE --benchmarks FILE.csv [--cpu-partition NAME] [--gpu-partition NAME]\n"
    "          [--plot FILE.png] [--max-speedup S] [--json]\n"
    "          SM-based, peak-performance and energy-based GPU charges side by side (the paper's\n"
    "          Tables II-IV) and which node an SU-minimising user picks as speedup varies (Fig. 1)\n"
    "  report  [--ledger FILE] [--since DATE] [--by user|partition|app] [--json]\n"
    "          the runs the accounting hook recorded (default ledger: $HETPU_LEDGER, else\n"
    "          $XDG_DATA_HOME/hetpu/ledger.sqlite)\n";

int rate(int argc, char **argv)
{
    Options o(argc, argv, {"config", "partition"}, {"json"},
              "hetpu su rate --config FILE [--partition NAME] [--json]: SU per node-hour of each partition "
              "(Eq. 15) and the Slurm TRESBillingWeights that charge the same under PriorityFlags=MAX_TRES");
    AccountingConfig cfg = load_accounting_config(o.required("config"));
    std::vector<Partition> shown;
    if (o.has("partition"))
        shown.push_back(cfg.choose(o.get("partition")));
    else
        shown = cfg.partitions;
    if (!o.has("json"))
        std::printf("%-12s %-28s %14s  %s\n", "partition", "node", "SU/node-hour", "Slurm equivalent (PriorityFlags=MAX_TRES)");
    for (const Partition &p : shown) {
        const double w = energy_weight(p);
        const std::string tres = format_tres_billing_weights(equivalent_tres_weights(p));
        if (o.has("json")) {
            nlohmann::json j = {{"partition", p.name},          {"su_per_node_hour", w},
                                {"cores_per_node", p.cores_per_node}, {"mem_gib_per_node", p.mem_gib_per_node},
                                {"gpus_per_node", p.gpus_per_node},   {"tres_billing_weights_equivalent", tres}};
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
        std::snprintf(node, sizeof node, "%d cores, %g GiB, %d GPUs", p.cores_per_node, p.mem_gib_per_node, p.gpus_per_node);
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
    Options o(argc, argv, {"config", "partition", "nodes", "cores", "mem-gib", "gpus", "hours"}, {"json"},
              "hetpu su charge --config FILE --partition NAME --nodes N --cores C --mem-gib M --gpus G --hours H "
              "[--json]: the charge of one job holding C cores, M GiB and G GPUs on each of N nodes");
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
    nlohmann::json j = {{"su", su},
                        {"fractions", {{"cores", f.cores}, {"gpus", f.gpus}, {"memory", f.memory}, {"max", f.max()}}},
                        {"rate", w},
                        {"partition", p.name},
                        {"nodes", nodes},
                        {"hours", hours}};
    double slurm_current = -1;
    if (!p.tres_billing_weights.empty()) {
        slurm_current = slurm_billing(parse_tres_billing_weights(p.tres_billing_weights), cores, mem, gpus, true) * hours * nodes;
        j["slurm_current_su"] = slurm_current;
    }
    if (o.has("json")) {
        std::printf("%s\n", j.dump().c_str());
        return 0;
    }
    std::printf("partition %s: %g SU per node-hour\n", p.name.c_str(), w);
    std::printf("per node: cores %g/%d = %.4g, GPUs %g/%d = %.4g, memory %g GiB = %.4g (whole %g GiB shares)\n", cores,
                p.cores_per_node, f.cores, gpus, p.gpus_per_node, f.gpus, mem, f.memory, p.mem_gib_per_node / p.cores_per_node);
    std::printf("charge: %g x %g h x %d node%s x %.4g = %.6g SU\n", w, hours, nodes, nodes == 1 ? "" : "s", f.max(), su);
    if (slurm_current >= 0)
        std::printf("current scheme (\"%s\", MAX_TRES): %.6g SU\n", p.tres_billing_weights.c_str(), slurm_current);
    return 0;
}

}  // namespace

int su_command(int argc, char **argv)
{
    if (argc < 1) {
        std::fputs(usage_text, stderr);
        return 2;
    }
    const std::string sub = argv[0];
    try {
        if (sub == "rate")
            return rate(argc - 1, argv + 1);
        if (sub == "charge")
            return charge(argc - 1, argv + 1);
        if (sub == "compare")
            return compare_command(argc - 1, argv + 1);
        if (sub == "report")
            return report_command(argc - 1, argv + 1);
        if (sub == "help" || sub == "--help" || sub == "-h") {
            std::fputs(usage_text, stdout);
            return 0;
        }
        std::fprintf(stderr, "hetpu su: unknown subcommand '%s'\n%s", sub.c_str(), usage_text);
        return 2;
    } catch (const HelpRequested &e) {
        std::fputs(e.what(), stdout);
        return 0;
    } catch (const UsageError &e) {
        std::fprintf(stderr, "hetpu su %s: %s\nRun 'hetpu su --help' for the subcommands and their options.\n",
                     sub.c_str(), e.what());
        return 2;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hetpu su %s: %s\n", sub.c_str(), e.what());
        return 1;
    }
}

}  // namespace hetpu::su
