// SPDX-License-Identifier: LGPL-2.1-or-later
// What the MGB placement algorithms (Chen, Porter, Pande, "Effective GPU Sharing Under
// Compiler Guidance") need to know about one accelerator: its memory and the per-SM limits
// that decide how many thread blocks of a kernel can be resident at once.
//
// A plain, fixed-size struct: it lives in process memory and, unchanged, in the node-wide
// arbiter's shared-memory segment, so it holds no pointers and no std:: containers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hetpu::mgb {

// Enough for every NVIDIA GPU to date (H100 SXM: 132 SMs, B200: 148).
constexpr unsigned kMaxSms = 256;

struct GpuSpec {
    char name[32] = {};               // "V100", "OpenCL pthread", ...
    uint64_t memory_bytes = 0;        // device memory a process may use (StarPU's limit)
    uint32_t sms = 0;                 // streaming multiprocessors (OpenCL: compute units)
    uint32_t max_warps_per_sm = 64;   // resident warps per SM
    uint32_t max_blocks_per_sm = 32;  // resident thread blocks per SM
    uint32_t shared_mem_per_sm = 0;   // bytes of shared memory per SM (0: not limiting)
    uint32_t warp_size = 32;          // threads per warp

    uint64_t max_warps() const { return uint64_t(sms) * max_warps_per_sm; }
};

// The published figures of NVIDIA's data-centre GPUs: "P100" (SXM2 16 GB), "V100" (SXM2
// 16 GB, as in the paper), "A100" (SXM4 40 GB), "H100" (SXM5 80 GB). Case-insensitive.
// Memory is taken as GiB (16 GB -> 16 * 2^30 bytes).
std::optional<GpuSpec> gpu_preset(std::string_view name);
std::vector<std::string> gpu_preset_names();

// Copies name into spec.name, truncating to fit.
void set_spec_name(GpuSpec &spec, std::string_view name);

// A spec that can hold work at all: sms in 1..kMaxSms, nonzero per-SM limits and warp size.
// Throws std::invalid_argument saying what is wrong.
void check_spec(const GpuSpec &spec);

}  // namespace hetpu::mgb
