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
    double mem_gib_per_node = 0;  // the step's, or SLURM_MEM_PER_NODE, or _PER_CPU x cpus (MiB); 0 = not given
    int gpus_per_node = 0;        // SLURM_GPUS_ON_NODE, else the count in SLURM_JOB_GPUS / SLURM_GPUS_PER_NODE
    int procid = 0;               // SLURM_PROCID, else the MPI rank: only task 0 charges the allocation
};

// What Slurm allocated the whole job, from the TRES= field of `scontrol show job -o`
// ("cpu=4,mem=24105M,node=1,billing=8,gres/gpu=2"): totals over the job's nodes.
struct JobTres {
    int nodes = 0;
    int cpus = 0;
    double mem_gib = 0;
    bool has_mem = false;
    int gpus = 0;
};
// Throws std::invalid_argument on a malformed count or memory size.
JobTres parse_job_tres(const std::string &tres);

// The TRES= field of `scontrol show job -o ID` (or `show step` for "ID.STEP"), "" when it
// cannot be had.
using JobTresQuery = std::function<std::string(const std::string &job_id)>;
std::string scontrol_job_tres(const std::string &job_id);

// nullopt when SLURM_JOB_ID is unset (not under Slurm). Throws std::invalid_argument naming
// the variable when one is present but malformed.
//
// The environment does not always say what Slurm allocated: a job that asked no memory
// (Slurm's default: here the whole node) or whose allocation srun made has no
// SLURM_MEM_PER_*, and a process of salloc's shell or of mpirun inside an allocation has no
// SLURM_CPUS_ON_NODE and no GPU variable (slurmd sets those only for batch scripts and job
// steps). Task 0 then asks Slurm (`query`, once) for what the environment lacks. In a job
// step (SLURM_STEP_ID), the memory is the step's (`query` of "JOB.STEP"): the environment's
// SLURM_MEM_PER_NODE is the job's, the CPUs and GPUs slurmd sets are the step's.
std::optional<SlurmAllocation> read_slurm_allocation(const EnvLookup &env,
                                                     const JobTresQuery &query = scontrol_job_tres);

}  // namespace hetpu::accounting
