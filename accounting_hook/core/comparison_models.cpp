// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/comparison_models.h"

#include <cmath>
#include <stdexcept>

#include "accounting_hook/core/su_model.h"

namespace hetpu::accounting {

const char *model_key(ChargeModel m)
{
    switch (m) {
    case ChargeModel::sm: return "sm";
    case ChargeModel::peak: return "peak";
    case ChargeModel::energy: return "energy";
    }
    return "?";
}

const char *model_title(ChargeModel m)
{
    switch (m) {
    case ChargeModel::sm: return "SM-based";
    case ChargeModel::peak: return "peak-performance-based";
    case ChargeModel::energy: return "energy-based (TDP, Eq. 15)";
    }
    return "?";
}

std::optional<double> gpu_node_weight(ChargeModel m, const Partition &cpu, const Partition &gpu, std::string *why)
{
    switch (m) {
    case ChargeModel::sm:
        if (gpu.gpu_sms <= 0) {
            if (why)
                *why = "partition '" + gpu.name + "' has no gpu_sms";
            return std::nullopt;
        }
        return static_cast<double>(gpu.gpus_per_node) * gpu.gpu_sms;
    case ChargeModel::peak:
        if (!(gpu.gpu_peak_flops > 0) || !(cpu.cpu_peak_flops > 0)) {
            if (why)
                *why = "needs gpu_peak_flops in '" + gpu.name + "' and cpu_peak_flops in '" + cpu.name + "'";
            return std::nullopt;
        }
        // Eq. 22: the GPU node's GPUs against the CPU node's CPUs, times that node's cores.
        return gpu.gpus_per_node * gpu.gpu_peak_flops / (cpu.cpu_sockets * cpu.cpu_peak_flops) * cpu.cores_per_node;
    case ChargeModel::energy: return energy_weight(gpu);
    }
    return std::nullopt;
}

std::vector<ComparisonTable> compare_models(const Partition &cpu, const Partition &gpu,
                                            const std::vector<Benchmark> &benchmarks, std::vector<std::string> *skipped)
{
    validate(cpu);
    validate(gpu);
    if (cpu.has_gpus())
        throw std::invalid_argument("compare: the CPU partition '" + cpu.name + "' has GPUs");
    if (!gpu.has_gpus())
        throw std::invalid_argument("compare: the GPU partition '" + gpu.name + "' has no GPUs");
    const double cpu_node_hour = energy_weight(cpu);  // C: one SU per core-hour
    std::vector<ComparisonTable> tables;
    for (ChargeModel m : all_charge_models) {
        std::string why;
        std::optional<double> w = gpu_node_weight(m, cpu, gpu, &why);
        if (!w) {
            if (skipped)
                skipped->push_back(std::string(model_title(m)) + ": " + why);
            continue;
        }
        ComparisonTable t{m, *w, {}};
        const double gpu_charge = std::round(*w);
        for (const Benchmark &b : benchmarks) {
            ComparisonRow r;
            r.application = b.application;
            r.perf_ratio = b.perf_ratio;
            r.cpu_charge = b.perf_ratio * cpu_node_hour;
            r.gpu_charge = gpu_charge;
            r.cost_ratio = r.cpu_charge / r.gpu_charge;
            t.rows.push_back(r);
        }
        tables.push_back(std::move(t));
    }
    return tables;
}

std::vector<DecisionRow> energy_decisions(const Partition &cpu, const Partition &gpu,
                                          const std::vector<ComparisonTable> &tables,
                                          const std::vector<double> &speedups)
{
    const double cpu_su = energy_weight(cpu);    // 1 h on a CPU node
    const double cpu_wh = cpu.node_cpu_tdp_w();  // Eq. 29: CPU node TDP x 1 h
    const double gpu_w = gpu.node_gpu_tdp_w();   // Eq. 29: GPU TDP x 1/s h
    std::vector<DecisionRow> rows;
    for (double s : speedups) {
        if (!(s > 0))
            throw std::invalid_argument("energy_decisions: speedups must be positive");
        DecisionRow row;
        row.speedup = s;
        for (const ComparisonTable &t : tables) {
            Decision d;
            const double gpu_su = std::round(t.gpu_node_hour) / s;
            d.gpu = !(cpu_su <= gpu_su);
            d.su = d.gpu ? gpu_su : cpu_su;
            d.energy_wh = d.gpu ? gpu_w / s : cpu_wh;
            row.by_model.push_back(d);
        }
        row.least_energy.gpu = gpu_w / s < cpu_wh;
        row.least_energy.energy_wh = row.least_energy.gpu ? gpu_w / s : cpu_wh;
        rows.push_back(row);
    }
    return rows;
}

std::vector<double> speedup_grid(double max, double step)
{
    if (!(step > 0) || !(max >= 1))
        throw std::invalid_argument("speedup grid: need max >= 1 and step > 0");
    std::vector<double> v;
    for (int i = 0;; ++i) {
        double s = 1 + i * step;
        if (s > max + 1e-9)
            break;
        v.push_back(s);
    }
    return v;
}

}  // namespace hetpu::accounting
