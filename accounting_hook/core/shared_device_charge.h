// SPDX-License-Identifier: LGPL-2.1-or-later
// From a process's share-time of the devices it shared through the MGB arbiter to the
// figures its charge and ledger row carry: the part of each device charged, its
// part of each device's joules, and the GPU worker types' energy made to agree with them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "node_arbiter/core/device_share.h"
#include "accounting_hook/core/job_record.h"

namespace hetpu::accounting {

struct SharedDevice {
    std::string key;
    int peers = 0;
    ShareTime time;                // seconds
    ShareEnergy split;             // its part, split at the device counter's readings (segments 0: none)
    std::optional<double> joules;  // the device's own joules over the run, when the sensor tells devices apart
    std::string source;            // the sensor or model that measured it (the split's counter included)
};

// One DeviceShareUsage per device. A device split at its counter's readings is charged its
// part of them, and its device_energy_j is the device's joules over the charged interval.
// Otherwise its part is its weight-seconds at the device's mean power over the
// `measured_s` seconds its joules cover (weight 0 outside the arbiter); a device without
// its own joules gets an equal part of `pooled_gpu_joules` (what the GPU source measured
// for all of this run's GPUs).
std::vector<DeviceShareUsage> device_usages(const std::vector<SharedDevice> &devices, double pooled_gpu_joules,
                                            const std::string &pooled_source, double measured_s);

// Sets the energy of the GPU worker types (`gpu_types`: their names, e.g. "cuda") to this
// process's parts of the devices, split among those types in proportion to what they had
// (evenly when they had nothing). No GPU worker type: nothing changes.
void move_gpu_energy_to_devices(std::vector<WorkerTypeUsage> &workers, const std::vector<std::string> &gpu_types,
                                const std::vector<DeviceShareUsage> &devices);

// HETPU_ACCOUNTING_GPU_SHARE: "use" or "allocation"; unset: "use" when the run's devices went
// through the node-wide arbiter, else "allocation". Throws std::invalid_argument on another
// value (Settings checks it first; this is the last line).
bool charge_gpu_by_use(const std::optional<std::string> &setting, bool shared_through_arbiter);

}  // namespace hetpu::accounting
