// SPDX-License-Identifier: LGPL-2.1-or-later
// The resources one accelerator task asks for, as MGB's compiler probe conveys them:
// device memory, and the launch configuration that decides its compute footprint.
#pragma once

#include <cstdint>

#include "node_arbiter/core/gpu_spec.h"

namespace hetpu::mgb {

struct TaskNeeds {
    uint64_t bytes = 0;                 // device memory held from start to end of the task
    uint32_t blocks = 0;                // thread blocks of its (largest) kernel; 0: unknown
    uint32_t threads_per_block = 0;     // 0 with blocks > 0: one warp per block
    uint32_t shared_mem_per_block = 0;  // bytes
    // Share of the time it holds its device that its kernels run, in 1/1000 (the rest: host
    // phases, transfers). 0: unknown, taken as 1000 (kernel-bound). Only the time-sliced
    // co-location model reads it (colocation.h).
    uint32_t busy_permille = 0;
};

// busy_permille with unknown (0) as 1000 and anything above 1000 capped.
uint32_t busy_share_permille(const TaskNeeds &needs);

// Warps of one block: ceil(threads / warp size), at least 1.
uint32_t warps_per_block(const TaskNeeds &needs, const GpuSpec &spec);

// How many of its blocks can be resident on one SM of this device at once (0: a single
// block exceeds an SM's warp or shared-memory limit, so the kernel cannot run there).
uint32_t blocks_per_sm_limit(const TaskNeeds &needs, const GpuSpec &spec);

// The compute footprint placed on the device. A grid larger than one resident wave
// occupies one wave (the rest of its blocks run as earlier ones retire). A task with
// unknown launch configuration (blocks == 0) is taken, conservatively, to fill the whole
// device: one block of max_warps_per_sm warps on every SM.
struct Footprint {
    uint32_t blocks = 0;  // resident blocks to place
    uint32_t warps_per_block = 0;
    uint32_t shared_mem_per_block = 0;
    bool runnable = false;  // false: a block does not fit an empty SM
    uint64_t warps() const { return uint64_t(blocks) * warps_per_block; }
};
Footprint footprint_on(const TaskNeeds &needs, const GpuSpec &spec);

}  // namespace hetpu::mgb
