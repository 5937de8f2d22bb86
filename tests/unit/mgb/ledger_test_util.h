// SPDX-License-Identifier: LGPL-2.1-or-later
// Helpers shared by the MGB ledger tests: small hand-checkable device specs and a heap
// Ledger (it is ~0.35 MB, too big for a test's stack).
#pragma once

#include <cstring>
#include <memory>
#include <string>

#include "sched_policies/mgb/core/gpu_ledger.h"

namespace hetpu::mgb::test {

// A toy GPU small enough to follow by hand: `sms` SMs of 8 warps and 4 blocks each.
inline GpuSpec tiny_spec(uint64_t memory_bytes = 100, uint32_t sms = 4, uint32_t shared_mem_per_sm = 0)
{
    GpuSpec spec;
    set_spec_name(spec, "tiny");
    spec.memory_bytes = memory_bytes;
    spec.sms = sms;
    spec.max_warps_per_sm = 8;
    spec.max_blocks_per_sm = 4;
    spec.shared_mem_per_sm = shared_mem_per_sm;
    spec.warp_size = 32;
    return spec;
}

inline std::unique_ptr<Ledger> make_ledger(unsigned ndevices = 0, const GpuSpec &spec = tiny_spec())
{
    auto ledger = std::make_unique<Ledger>();
    ledger_init(*ledger);
    for (unsigned d = 0; d < ndevices; ++d)
        ledger_add_device(*ledger, "dev:" + std::to_string(d), spec);
    return ledger;
}

// A task of `blocks` blocks of `threads` threads holding `bytes` of device memory.
inline PlaceRequest request(uint64_t bytes, uint32_t blocks, uint32_t threads = 32, uint32_t shared = 0)
{
    PlaceRequest r;
    r.needs.bytes = bytes;
    r.needs.blocks = blocks;
    r.needs.threads_per_block = threads;
    r.needs.shared_mem_per_block = shared;
    r.pid = 100;
    return r;
}

}  // namespace hetpu::mgb::test
