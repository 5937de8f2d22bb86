// SPDX-License-Identifier: LGPL-2.1-or-later
// The charge for one finished run, and the one-screen summary that explains it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "accounting_hook/core/job_record.h"
#include "accounting_hook/core/partition.h"
#include "accounting_hook/core/slurm_allocation.h"

namespace hetpu::accounting {

struct RunInputs {
    std::string user, host, app, policy;
    Partition partition;
    std::optional<SlurmAllocation> slurm;  // beats the process figures when present
    double wall_s = 0;
    // What the process itself held (one node): cores its workers occupy, GPUs its workers
    // drive, its peak resident memory.
    double cores_in_use = 0;
    double gpus_in_use = 0;
    double peak_rss_gib = 0;
    std::vector<WorkerTypeUsage> workers;  // energy already attributed
    // Devices shared through the MGB arbiter, and whether fg is charged by their use (issue
    // 49). charge_gpu_use without devices (or with a Slurm allocation) charges the allocation.
    std::vector<DeviceShareUsage> devices;
    bool charge_gpu_use = false;
    std::optional<double> grid_gco2e_per_kwh;
};

// Fractions (Slurm allocation or process usage, clamped to the node), weight (Eq. 15),
// SU (Eq. 1; 0 for Slurm tasks other than task 0, which charges the whole allocation),
// energy totals and carbon. Throws std::invalid_argument on an unusable partition.
JobRecord charge_run(const RunInputs &in);

// The stderr summary: a handful of lines that say what was charged and why. `ledger_note`
// is "recorded as job 12 in FILE" or "NOT recorded: reason".
std::string format_summary(const JobRecord &job, const Partition &p, const std::string &ledger_note);

// What `hetpu su report` prints under a run whose devices went through the node-wide
// arbiter: the GPU fraction it was charged, then each device's part ("opencl:0:0 x0.49
// (0.0012 share-h, 246 J, shared with 2)"). Charged by allocation, the parts are its use,
// and the line says they were not charged.
std::string shared_devices_line(const JobRecord &job);

// "1.23 kJ", "456 J", "7.8 mJ"...
std::string format_joules(double j);

}  // namespace hetpu::accounting
