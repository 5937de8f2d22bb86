// SPDX-License-Identifier: LGPL-2.1-or-later
// Turning per-worker-type busy time into energy per worker type, with the source named.
//
// A sensor (RAPL, NVML) measures a whole device; the hook knows how long each worker type
// kept that device busy. The device's joules are split among the worker types running on
// it in proportion to their busy time. The model source is fed the same busy time and read
// the same way, so every figure also has a modelled counterpart to compare with.
#pragma once

#include <vector>

#include "accounting_hook/core/job_record.h"
#include "perfmodels/energy/energy_source.h"

namespace hetpu::accounting {

struct BusyByType {
    energy::WorkerType type = energy::WorkerType::cpu;
    int workers = 0;
    long long tasks = 0;
    double busy_s = 0;
};

// `sources`: what measures each device (nullptr: nothing, the figure is 0 with source
// "none"); `model`: the model source (may be null). Both get add_busy() for every type here
// once, so call this once per run. OpenCL workers count as CPU when opencl_on_cpu (PoCL).
std::vector<WorkerTypeUsage> attribute_energy(const std::vector<BusyByType> &busy, energy::EnergySource *cpu_source,
                                              energy::EnergySource *gpu_source, energy::EnergySource *model,
                                              bool opencl_on_cpu);

}  // namespace hetpu::accounting
