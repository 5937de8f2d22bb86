// SPDX-License-Identifier: LGPL-2.1-or-later
// The accelerators of the running StarPU, as MGB devices: one per accelerator memory node
// (CUDA or OpenCL), with the workers that run on it, a key that names the same physical
// device in every process of the node, and its GpuSpec.
#pragma once

#include <starpu.h>

#include <string>
#include <vector>

#include "node_arbiter/core/gpu_spec.h"

namespace hetpu::mgb {

struct AcceleratorDevice {
    unsigned memory_node = 0;
    std::vector<int> workers;        // several per CUDA device with STARPU_NWORKER_PER_CUDA
    std::string key;                 // "cuda:0000:3b:00.0" (PCI bus id), "opencl:<platform>:<device>"
    GpuSpec spec;                    // memory_bytes: what StarPU may use on the node (STARPU_LIMIT_*_MEM)
    bool exclusive_process = false;  // CUDA compute mode exclusive-process (how MPS is set up)
};

// Accelerators whose workers belong to the context, in memory-node order.
std::vector<AcceleratorDevice> discover_accelerators(unsigned sched_ctx_id);

}  // namespace hetpu::mgb
