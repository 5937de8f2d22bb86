// SPDX-License-Identifier: LGPL-2.1-or-later
// A batch of GPU jobs on one node, for `hetpu mgb-sim` (the evaluation setting of C. Chen,
// C. Porter, S. Pande, "Effective GPU Sharing Under Compiler Guidance", Section V): GPUs, a
// pool of workers, and jobs queued at t = 0 or arriving over time ("arrive_s"). Read from JSON:
//
//   {"gpus": [{"preset": "V100", "count": 4}],          // or explicit fields, see below
//    "workers": 16,
//    "noise": 0.0,                                       // optional, see JobSpec
//    "interference": 0.05,                               // optional, see simulator.h
//    "jobs": [{"name": "lavaMD-a", "memory_gib": 12.5, "cpu_seconds": 3.0, "repeat": 1,
//              "kernels": [{"blocks": 1000, "threads_per_block": 128, "seconds": 20.0,
//                           "host_seconds": 0.0, "repeat": 1}]}]}
//
// A GPU entry is either {"preset": "P100|V100|A100|H100", "count": N} (any explicit field
// then overrides the preset's) or {"name", "count", "memory_gib", "sms", "max_warps_per_sm",
// "max_blocks_per_sm"} with optional "shared_mem_per_sm_kib" and "warp_size".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "node_arbiter/core/gpu_spec.h"
#include "sched_policies/mgb/core/colocation.h"

namespace hetpu::mgb_sim {

// How co-located kernels share a device (simulator.h): concurrently (MPS) or time-sliced.
// The MGB core's model, which its placement also reads.
using mgb::Colocation;
using mgb::colocation_name;  // "mps", "time-sliced"
using mgb::parse_colocation;

// Every message names the offending field (e.g. "jobs[3].kernels[0].seconds") and how to fix it.
struct ScenarioError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct KernelSpec {
    uint32_t blocks = 0;                // grid size in thread blocks (> 0)
    uint32_t threads_per_block = 0;     // > 0
    uint32_t shared_mem_per_block = 0;  // bytes; optional "shared_mem_per_block"
    double seconds = 0;                 // standalone run time on the device (> 0)
    double host_seconds = 0;            // host work after the kernel (transfers, host loop);
                                        // the job keeps its device memory, not its SMs
    uint32_t repeat = 1;                // launches of this kernel in a row (iterations)
};

struct JobSpec {
    std::string name;
    uint64_t memory_bytes = 0;       // held on one device from its first kernel to its last
    uint32_t allowed_devices = ~0u;  // optional "devices": [indices] the job may run on (pinning)
    double cpu_seconds = 0;          // host work before the GPU part (input, setup)
    double arrive_s = 0;             // optional "arrive_s": when it joins the queue (jobs listed in arrival order)
    std::vector<KernelSpec> kernels;
};

struct MgbScenario {
    std::vector<mgb::GpuSpec> gpus;  // one entry per device (counts expanded)
    unsigned workers = 0;            // concurrent jobs (the paper's worker pool)
    // Jobs in queue order ("repeat" expanded). Workers take them first come, first served.
    std::vector<JobSpec> jobs;
    // Relative run-time noise: each job draws one factor in [1-noise, 1+noise] for its host
    // work and one for its GPU work, from the run's seed (0: exact, seed irrelevant).
    double noise = 0;
    double interference = 0.05;  // see simulator.h (co-location model)
    Colocation colocation = Colocation::Mps;
};

MgbScenario parse_mgb_scenario(const std::string &json_text);
MgbScenario load_mgb_scenario(const std::string &path);

}  // namespace hetpu::mgb_sim
