// SPDX-License-Identifier: LGPL-2.1-or-later
// A partition as the accounting model sees it: identical nodes described by their cores,
// memory, CPU sockets and GPUs, with the thermal design powers that set the GPU weight
// (the accounting paper, Eq. 15) and the optional figures the comparison models of Section V need.
#pragma once

#include <string>

namespace hetpu::accounting {

struct Partition {
    std::string name;
    int cores_per_node = 0;       // C: CPU cores on one node (all sockets)
    double mem_gib_per_node = 0;  // M_tot
    int cpu_sockets = 1;
    double cpu_tdp_w = 0;  // per socket
    int gpus_per_node = 0;
    double gpu_tdp_w = 0;  // per GPU
    // Optional, for the comparison models (0 = not given).
    int gpu_sms = 0;            // streaming multiprocessors per GPU
    double cpu_peak_flops = 0;  // per socket
    double gpu_peak_flops = 0;  // per GPU
    // Optional: the centre's current Slurm TRESBillingWeights for this partition, shown
    // next to this model's charge ("" = not given).
    std::string tres_billing_weights;
    // Where the description came from ("config FILE", "detected by hwloc", ...).
    std::string origin;

    bool has_gpus() const { return gpus_per_node > 0; }
    int cores_per_socket() const { return cpu_sockets > 0 ? cores_per_node / cpu_sockets : cores_per_node; }
    double node_cpu_tdp_w() const { return cpu_sockets * cpu_tdp_w; }
    double node_gpu_tdp_w() const { return gpus_per_node * gpu_tdp_w; }
};

// Throws std::invalid_argument naming the first field that makes `p` unusable (non-positive
// cores or memory, GPUs without a GPU TDP, a GPU partition without a CPU TDP, ...).
void validate(const Partition &p);

}  // namespace hetpu::accounting
