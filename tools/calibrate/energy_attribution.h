// SPDX-License-Identifier: LGPL-2.1-or-later
// Dynamic energy of each abstract processor in one calibration repetition, where all the
// processors ran one block concurrently (the paper's methodology, so contention is in the
// figures). Pure C++.
//
// - A device covered by the model source: each processor's dynamic energy is its worker
//   type's (active - idle) power times its own busy time: exact per processor, and labelled
//   "model" (an estimate, not a measurement).
// - A device covered by a sensor (RAPL, NVML): the counter's rise over the repetition minus
//   the device's idle power times the elapsed time is the device's dynamic energy; a sensor
//   cannot tell concurrent processors apart, so it is split between the processors on that
//   device in proportion to their busy times, and labelled with the sensor's name.
#pragma once

#include <string>
#include <vector>

#include "perfmodels/energy/energy_source.h"

namespace hetpu::calibrate {

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

}  // namespace hetpu::calibrate
