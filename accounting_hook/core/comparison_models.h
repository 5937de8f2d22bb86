// SPDX-License-Identifier: LGPL-2.1-or-later
// The GPU-node charging schemes the accounting paper compares in Section V, side by side with its own:
//
//   SM-based           w_g = GPUs per node x SMs per GPU                        (Eq. 17)
//   peak performance   w_g = (GPU node peak FLOP/s / CPU node peak FLOP/s) x C    (Eq. 22)
//   energy-based       w_g = (sum GPU TDP / sum CPU TDP) x C                      (Eq. 15)
//
// All normalised to one CPU core-hour = 1 SU, so a CPU node-hour costs C. The tables are
// the paper's Tables II-IV (cost of one hour of a benchmark on the CPU nodes matching one
// GPU node, vs one GPU node-hour) and the decision table behind its Fig. 1 (which node a
// user minimising SUs picks as the GPU speedup varies, and the energy that choice costs).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "accounting_hook/core/partition.h"

namespace hetpu::accounting {

enum class ChargeModel { sm, peak, energy };
constexpr ChargeModel all_charge_models[] = {ChargeModel::sm, ChargeModel::peak, ChargeModel::energy};

const char *model_key(ChargeModel m);    // "sm", "peak", "energy"
const char *model_title(ChargeModel m);  // "SM-based", ...

// SU per GPU node-hour under `m`; nullopt when the partitions lack the figures the model
// needs (SM counts, peak FLOP rates), with `why` saying which.
std::optional<double> gpu_node_weight(ChargeModel m, const Partition &cpu, const Partition &gpu,
                                      std::string *why = nullptr);

struct Benchmark {
    std::string application;
    double perf_ratio = 0;  // CPU nodes needed to equal one GPU node
};

struct ComparisonRow {
    std::string application;
    double perf_ratio = 0;
    double cpu_charge = 0;  // perf_ratio x C, SU for one hour
    double gpu_charge = 0;  // one GPU node-hour, whole SU
    double cost_ratio = 0;  // cpu_charge / gpu_charge
};

struct ComparisonTable {
    ChargeModel model;
    double gpu_node_hour = 0;  // the model's weight, unrounded
    std::vector<ComparisonRow> rows;
};

// One table per model the partitions have figures for; `skipped` names the others and why.
// The paper charges whole SU per GPU node-hour (465.6 is printed and used as 466), and so
// do these tables. Throws std::invalid_argument if `cpu` has GPUs or `gpu` has none.
std::vector<ComparisonTable> compare_models(const Partition &cpu, const Partition &gpu,
                                            const std::vector<Benchmark> &benchmarks,
                                            std::vector<std::string> *skipped = nullptr);

// Fig. 1: application X takes 1 h on a CPU node and 1/s h on a GPU node. A user picks the
// node with the lower charge (CPU on a tie) and spends CPU node TDP x 1 h or GPU TDP x 1/s h.
struct Decision {
    bool gpu = false;
    double su = 0;
    double energy_wh = 0;
};
struct DecisionRow {
    double speedup = 0;
    std::vector<Decision> by_model;  // in the order of the tables given
    Decision least_energy;           // the choice an energy-minimising user would make
};
std::vector<DecisionRow> energy_decisions(const Partition &cpu, const Partition &gpu,
                                          const std::vector<ComparisonTable> &tables,
                                          const std::vector<double> &speedups);

// Speedups 1, 1.5, ..., up to `max` (the paper's Fig. 1 spans 1..20).
std::vector<double> speedup_grid(double max, double step);

}  // namespace hetpu::accounting
