// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue of the shared-device charge: which sensor index measures each accelerator of the run, and, at
// the end, this process's share of the devices it shared through the MGB arbiter.
#pragma once

#include <string>
#include <vector>

#include "accounting_hook/core/run_charge.h"
#include "perfmodels/energy/energy_source.h"

namespace hetpu::accounting {

struct AcceleratorKey {
    std::string key;   // the arbiter's key
    bool gpu = false;  // counts as a GPU (CUDA; OpenCL unless it runs on the CPU)
    int devid = -1;    // StarPU's device id: the sensor's index (NVML numbers GPUs the same way
                       // when CUDA_DEVICE_ORDER=PCI_BUS_ID and no CUDA_VISIBLE_DEVICES remaps them)
};

// At run start (StarPU running): the run's accelerators.
std::vector<AcceleratorKey> run_accelerators(bool opencl_on_cpu);

// Once the energy sources are open: every arbiter lock this process takes reads the energy
// counters of the run's GPUs (when the GPU source has per-GPU counters), so that the
// sharers of a device split the same readings of it (share_clock.h). The source must
// outlive the reader: apply_device_shares or stop_reading_shared_device_energy removes it.
void read_shared_device_energy(const std::vector<AcceleratorKey> &accelerators, energy::EnergySource *gpu_source);
void stop_reading_shared_device_energy();

// At run end (after the scheduler left the arbiter): fills in.devices and
// in.charge_gpu_use, and sets the GPU worker types' energy to this process's part of each
// device. Nothing when the run shared no GPU through the node-wide arbiter. `gpu_source`
// may be null. Problems go to `warn` (the run must not fail over its bill).
void apply_device_shares(RunInputs &in, const std::vector<AcceleratorKey> &accelerators,
                         energy::EnergySource *gpu_source, bool opencl_on_cpu, void (*warn)(const std::string &));

}  // namespace hetpu::accounting
