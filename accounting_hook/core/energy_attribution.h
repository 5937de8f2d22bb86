// SPDX-License-Identifier: LGPL-2.1-or-later
// Turning busy time into energy, with the source named: per worker type over a run (the
// accounting hook), per processor over one calibration repetition (`hetpu calibrate`).
//
// A sensor (RAPL, NVML) measures a whole device and cannot tell concurrent users apart;
// what is known is how long each user (worker type, processor) kept that device busy. The
// device's joules are split among the users on it in proportion to their busy time. The
// model source is fed the same busy time and read the same way, so every figure also has a
// modelled counterpart to compare with.
#pragma once

#include <string>
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
// A user's part of its device's `joules`: by busy time, or, when nothing on the device was
// busy, by workers (a run that never executed a task still drew its part); 0 when neither.
double busy_time_part(double joules, double busy_s, int workers, double device_busy_s, int device_workers);

std::vector<WorkerTypeUsage> attribute_energy(const std::vector<BusyByType> &busy, energy::EnergySource *cpu_source,
                                              energy::EnergySource *gpu_source, energy::EnergySource *model,
                                              bool opencl_on_cpu);

// ---- one calibration repetition: every processor ran one block at once (the paper's
// methodology, so contention is in the figures) ------------------------------------------
//
// - A device covered by the model source: each processor's dynamic energy is its worker
//   type's (active - idle) power times its own busy time: exact per processor, and labelled
//   "model" (an estimate, not a measurement).
// - A device covered by a sensor: the counter's rise over the repetition minus the device's
//   idle power times the elapsed time is the device's dynamic energy, split between the
//   processors on that device by busy time, and labelled with the sensor's name.

struct DeviceReading {
    energy::Device device = energy::Device::cpu;
    std::string source;     // "rapl", "nvml", "model", ...
    bool measured = false;  // a sensor
    double joules_before = 0, joules_after = 0;
    double idle_w = 0;  // sensors: the device's idle power, measured before calibrating
};

struct ProcessorRun {
    energy::WorkerType type = energy::WorkerType::cpu;
    double busy_s = 0;  // execution time of its block
};

struct ProcessorEnergy {
    double dynamic_j = 0;
    std::string source;
};

// `readings`: one per device that has processors; `elapsed_s`: wall time of the repetition.
// A processor whose device has no reading gets 0 J and source "none". Negative sensor
// figures (noise on an idle-dominated interval) are clamped to 0.
std::vector<ProcessorEnergy> attribute_repetition_energy(const std::vector<ProcessorRun> &runs,
                                                         const std::vector<DeviceReading> &readings, double elapsed_s,
                                                         const energy::PowerModel &model, bool opencl_on_cpu);

}  // namespace hetpu::accounting
