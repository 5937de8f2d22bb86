// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/su/su_compare.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "accounting_hook/core/benchmark_csv.h"
#include "accounting_hook/core/comparison_models.h"
#include "accounting_hook/core/partition_config.h"
#include "accounting_hook/core/su_model.h"
#include "common/gnuplot_png.h"
#include "tools/su/su_options.h"

namespace hetpu::su {

namespace {

using namespace hetpu::accounting;

// 5508 -> "5,508", as the paper prints charges.
std::string thousands(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    std::string s = buf, out;
    int n = 0;
    for (auto it = s.rbegin(); it != s.rend(); ++it) {
        if (n && n % 3 == 0 && *it != '-')
            out.insert(out.begin(), ',');
        out.insert(out.begin(), *it);
        ++n;
    }
    return out;
}

// The partition named by `option`, else the only one with (or without) GPUs.
const Partition &pick(const AccountingConfig &cfg, const Options &o, const std::string &option, bool gpus)
{
    if (o.has(option))
        return cfg.choose(o.get(option));
    const Partition *found = nullptr;
    for (const Partition &p : cfg.partitions) {
        if (p.has_gpus() != gpus)
            continue;
        if (found)
            throw UsageError(std::string("several ") + (gpus ? "GPU" : "CPU") + " partitions in " + cfg.source +
                             ": name one with --" + option);
        found = &p;
    }
    if (!found)
        throw UsageError(cfg.source + " has no " +
                         (gpus ? "GPU partition (gpus_per_node > 0)" : "CPU partition (gpus_per_node = 0)"));
    return *found;
}

void write_plot(const std::string &png, const Partition &cpu, const Partition &gpu,
                const std::vector<ComparisonTable> &tables, double max_speedup)
{
    std::vector<double> grid = speedup_grid(max_speedup, 0.05);
    std::vector<DecisionRow> rows = energy_decisions(cpu, gpu, tables, grid);
    std::string script = "set title 'Application X: 1 h on a CPU node or 1/s h on a GPU node; the user picks the "
                         "lower SU charge'\nset xlabel 'GPU speedup s'\nset ylabel 'energy of the job a user "
                         "minimising SU runs (Wh)'\nset key bottom left box opaque\nset grid\nset offsets 0, 0, "
                         "graph 0.08, 0\nset yrange [0:*]\n$d << EOD\n";
    char num[32];
    for (const DecisionRow &r : rows) {
        std::snprintf(num, sizeof num, "%.17g", r.speedup);
        script += num;
        for (const Decision &d : r.by_model) {
            std::snprintf(num, sizeof num, " %.17g", d.energy_wh);
            script += num;
        }
        std::snprintf(num, sizeof num, " %.17g\n", r.least_energy.energy_wh);
        script += num;
    }
    script += "EOD\nplot ";
    // SM and peak drawn wide underneath, energy-based narrow on top: where they coincide
    // all stay visible.
    const char *style[] = {"lw 6 lc rgb '#9ecae1'", "lw 3 dt 2 lc rgb '#31a354'", "lw 2 lc rgb '#e6550d'"};
    for (size_t i = 0; i < tables.size(); ++i) {
        char w[32];
        std::snprintf(w, sizeof w, "%.0f", std::round(tables[i].gpu_node_hour));
        script += "$d using 1:" + std::to_string(i + 2) + " with lines " + style[static_cast<int>(tables[i].model)] +
                  " title " +
                  gnuplot_quoted(std::string(model_title(tables[i].model)) + " (GPU node-hour " + w + " SU)") + ", ";
    }
    script += "$d using 1:" + std::to_string(tables.size() + 2) +
              " with lines lw 1 dt 3 lc rgb 'black' title 'least energy possible'\n";
    try {
        gnuplot_png(script, png);
    } catch (const std::runtime_error &e) {
        throw std::runtime_error("--plot " + png + ": " + e.what());
    }
}

}  // namespace

int compare_command(int argc, char **argv)
{
    Options o("compare", argc, argv,
              {{"config", "FILE", "the partitions' TOML description (required)"},
               {"benchmarks", "FILE.csv", "application,perf_ratio rows: CPU nodes that equal one GPU node (required)"},
               {"cpu-partition", "NAME", "the CPU partition (default: the only one without GPUs)"},
               {"gpu-partition", "NAME", "the GPU partition (default: the only one with GPUs)"},
               {"plot", "FILE.png", "plot the cheaper node per speedup with gnuplot"},
               {"max-speedup", "S", "the largest GPU speedup of the decision grid (default 20, >= 1)"},
               {"json", "", "JSON lines instead of tables"}},
              "SM-based, peak-performance and energy-based GPU charges side by side (the accounting "
              "paper's Tables II-IV) and which node an SU-minimising user picks as speedup varies (Fig. 1).");
    AccountingConfig cfg = load_accounting_config(o.required("config"));
    std::vector<Benchmark> benchmarks = load_benchmarks(o.required("benchmarks"));
    const Partition &cpu = pick(cfg, o, "cpu-partition", false);
    const Partition &gpu = pick(cfg, o, "gpu-partition", true);
    const double max_speedup = o.has("max-speedup") ? o.number("max-speedup", 1) : 20;
    std::vector<std::string> skipped;
    std::vector<ComparisonTable> tables = compare_models(cpu, gpu, benchmarks, &skipped);
    std::vector<DecisionRow> decisions = energy_decisions(cpu, gpu, tables, speedup_grid(max_speedup, 1));
    const bool json = o.has("json");

    for (const ComparisonTable &t : tables) {
        if (json) {
            for (const ComparisonRow &r : t.rows)
                std::printf("%s\n", nlohmann::json({{"table", "charges"},
                                                    {"model", model_key(t.model)},
                                                    {"gpu_node_hour", t.gpu_node_hour},
                                                    {"application", r.application},
                                                    {"perf_ratio", r.perf_ratio},
                                                    {"cpu_charge", r.cpu_charge},
                                                    {"gpu_charge", r.gpu_charge},
                                                    {"cost_ratio", r.cost_ratio}})
                                        .dump()
                                        .c_str());
            continue;
        }
        std::printf("%s model: GPU node-hour %.6g SU (charged %s), CPU node-hour %.6g SU\n", model_title(t.model),
                    t.gpu_node_hour, thousands(t.gpu_node_hour).c_str(), energy_weight(cpu));
        std::printf("  %-20s %11s %11s %11s %11s\n", "Application", "Perf. Ratio", "CPU Charge", "GPU Charge",
                    "Cost Ratio");
        for (const ComparisonRow &r : t.rows)
            std::printf("  %-20s %11g %11s %11s %11.2f\n", r.application.c_str(), r.perf_ratio,
                        thousands(r.cpu_charge).c_str(), thousands(r.gpu_charge).c_str(), r.cost_ratio);
        std::printf("\n");
    }
    for (const std::string &s : skipped)
        std::fprintf(stderr, "hetpu su compare: skipped the %s\n", s.c_str());

    // Fig. 1: energy of the choice each model leads an SU-minimising user to.
    if (!json) {
        std::printf(
            "Application X: 1 h on a CPU node (%g SU, %g Wh) or 1/s h on a GPU node (GPU TDP %g W); the user picks\n"
            "the lower charge (CPU on a tie). Energy of that choice per model (Wh):\n",
            energy_weight(cpu), cpu.node_cpu_tdp_w(), gpu.node_gpu_tdp_w());
        std::printf("  %7s", "speedup");
        for (const ComparisonTable &t : tables)
            std::printf(" %16s", model_key(t.model));
        std::printf(" %16s\n", "least energy");
    }
    for (const DecisionRow &r : decisions) {
        if (json) {
            nlohmann::json j = {{"table", "decision"}, {"speedup", r.speedup}};
            for (size_t i = 0; i < tables.size(); ++i)
                j[model_key(tables[i].model)] = {{"node", r.by_model[i].gpu ? "gpu" : "cpu"},
                                                 {"su", r.by_model[i].su},
                                                 {"energy_wh", r.by_model[i].energy_wh}};
            j["least_energy"] = {{"node", r.least_energy.gpu ? "gpu" : "cpu"}, {"energy_wh", r.least_energy.energy_wh}};
            std::printf("%s\n", j.dump().c_str());
            continue;
        }
        std::printf("  %7g", r.speedup);
        for (const Decision &d : r.by_model) {
            char cell[32];
            std::snprintf(cell, sizeof cell, "%s %7.1f%s", d.gpu ? "GPU" : "CPU", d.energy_wh,
                          std::fabs(d.energy_wh - r.least_energy.energy_wh) > 1e-9 ? " *" : "  ");
            std::printf(" %16s", cell);
        }
        char best[32];
        std::snprintf(best, sizeof best, "%s %7.1f", r.least_energy.gpu ? "GPU" : "CPU", r.least_energy.energy_wh);
        std::printf(" %16s\n", best);
    }
    if (!json)
        std::printf("  (* = the model leads to more energy than needed)\n");
    if (o.has("plot")) {
        write_plot(o.get("plot"), cpu, gpu, tables, max_speedup);
        std::fflush(stdout);
        std::fprintf(stderr, "hetpu su compare: plot written to %s\n", o.get("plot").c_str());
    }
    return 0;
}

}  // namespace hetpu::su
