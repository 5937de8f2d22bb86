// SPDX-License-Identifier: LGPL-2.1-or-later
// What Slurm allocated to the job this process runs in, read from the SLURM_* variables
// that srun/sbatch export. The SU charge is for what a job holds, not what it touches,
// so when these are present they beat the process's own usage.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/settings.h"  // EnvLookup

namespace hetpu::accounting {

struct SlurmAllocation {
    std::string job_id;
    std::string partition;        // SLURM_JOB_PARTITION ("" if unset)
    int nodes = 1;                // SLURM_JOB_NUM_NODES / SLURM_NNODES
    int cpus_per_node = 0;        // SLURM_CPUS_ON_NODE (this node; Slurm's allocation is taken as homogeneous)
    double mem_gib_per_node = 0;  // SLURM_MEM_PER_NODE, or SLURM_MEM_PER_CPU x cpus (MiB); 0 = not given
    int gpus_per_node = 0;        // SLURM_GPUS_ON_NODE, else the count in SLURM_JOB_GPUS / SLURM_GPUS_PER_NODE
    int procid = 0;               // SLURM_PROCID: only task 0 of a job charges the allocation
};

// nullopt when SLURM_JOB_ID is unset (not under Slurm). Throws std::invalid_argument naming
// the variable when one is present but malformed.
std::optional<SlurmAllocation> read_slurm_allocation(const EnvLookup &env);

}  // namespace hetpu::accounting
