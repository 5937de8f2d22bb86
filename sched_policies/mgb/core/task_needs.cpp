// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/mgb/core/task_needs.h"

#include <algorithm>

namespace hetpu::mgb {

uint32_t warps_per_block(const TaskNeeds &needs, const GpuSpec &spec)
{
    // A partial warp still occupies a whole warp slot on the SM; 0 threads means "unknown,
    // assume the smallest block", which is one warp.
    if (spec.warp_size == 0)
        return 1;
    const uint64_t w = (uint64_t(needs.threads_per_block) + spec.warp_size - 1) / spec.warp_size;
    return uint32_t(std::max<uint64_t>(w, 1));
}

uint32_t blocks_per_sm_limit(const TaskNeeds &needs, const GpuSpec &spec)
{
    // The three per-SM occupancy limits of the hardware; the tightest one wins. Integer
    // division makes the result 0 when one block alone exceeds a limit.
    uint32_t limit = spec.max_blocks_per_sm;
    limit = std::min(limit, spec.max_warps_per_sm / warps_per_block(needs, spec));
    if (spec.shared_mem_per_sm != 0 && needs.shared_mem_per_block != 0)
        limit = std::min(limit, spec.shared_mem_per_sm / needs.shared_mem_per_block);
    return limit;
}

Footprint footprint_on(const TaskNeeds &needs, const GpuSpec &spec)
{
    Footprint fp;
    if (needs.blocks == 0) {
        // Unknown launch: assume it fills the device (one full-SM block per SM). Safe for
        // Alg. 2 (it then runs alone) and maximal for Alg. 3's warp count.
        fp.blocks = spec.sms;
        fp.warps_per_block = spec.max_warps_per_sm;
        fp.shared_mem_per_block = 0;
        fp.runnable = spec.sms > 0 && spec.max_warps_per_sm > 0 && spec.max_blocks_per_sm > 0;
        return fp;
    }
    const uint32_t limit = blocks_per_sm_limit(needs, spec);
    // Blocks beyond one resident wave wait in the hardware queue for earlier blocks to
    // retire, so only one wave occupies the device at any moment.
    const uint64_t wave = uint64_t(spec.sms) * limit;
    fp.blocks = uint32_t(std::min<uint64_t>(needs.blocks, wave));
    fp.warps_per_block = warps_per_block(needs, spec);
    fp.shared_mem_per_block = needs.shared_mem_per_block;
    fp.runnable = limit > 0;
    return fp;
}

uint32_t busy_share_permille(const TaskNeeds &needs)
{
    return needs.busy_permille == 0 ? 1000u : std::min<uint32_t>(needs.busy_permille, 1000u);
}

}  // namespace hetpu::mgb
