// SPDX-License-Identifier: LGPL-2.1-or-later
#include "node_arbiter/core/gpu_spec.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <stdexcept>

namespace hetpu::mgb {

namespace {

constexpr uint64_t kGiB = uint64_t(1) << 30;

// NVIDIA's published figures (CUDA Programming Guide, "Compute Capabilities" table, and the
// P100/V100/A100/H100 whitepapers). The marketing "16 GB" / "40 GB" / "80 GB" are taken as
// GiB multiples (16 GiB ...): the boards carry 2^30-byte gigabytes of HBM, and a real run
// uses StarPU's limit anyway, so the preset only matters for unit tests and simulations.
struct Preset {
    const char *name;
    uint64_t memory_bytes;
    uint32_t sms;
    uint32_t max_warps_per_sm;
    uint32_t max_blocks_per_sm;
    uint32_t shared_mem_per_sm;
};

constexpr Preset kPresets[] = {
    {"P100", 16 * kGiB, 56, 64, 32, 64 * 1024},    // SXM2 16 GB, sm_60
    {"V100", 16 * kGiB, 80, 64, 32, 96 * 1024},    // SXM2 16 GB, sm_70 (the paper's 4xV100 node)
    {"A100", 40 * kGiB, 108, 64, 32, 164 * 1024},  // SXM4 40 GB, sm_80
    {"H100", 80 * kGiB, 132, 64, 32, 228 * 1024},  // SXM5 80 GB, sm_90
};

bool iequals(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

}  // namespace

std::optional<GpuSpec> gpu_preset(std::string_view name)
{
    for (const Preset &p : kPresets) {
        if (!iequals(name, p.name))
            continue;
        GpuSpec spec;
        set_spec_name(spec, p.name);
        spec.memory_bytes = p.memory_bytes;
        spec.sms = p.sms;
        spec.max_warps_per_sm = p.max_warps_per_sm;
        spec.max_blocks_per_sm = p.max_blocks_per_sm;
        spec.shared_mem_per_sm = p.shared_mem_per_sm;
        spec.warp_size = 32;
        return spec;
    }
    return std::nullopt;
}

std::vector<std::string> gpu_preset_names()
{
    std::vector<std::string> names;
    for (const Preset &p : kPresets)
        names.emplace_back(p.name);
    return names;
}

void set_spec_name(GpuSpec &spec, std::string_view name)
{
    // Always NUL-terminated: the name is printed by other processes reading shared memory.
    const size_t n = std::min(name.size(), sizeof spec.name - 1);
    std::memset(spec.name, 0, sizeof spec.name);
    std::memcpy(spec.name, name.data(), n);
}

void check_spec(const GpuSpec &spec)
{
    if (spec.sms == 0)
        throw std::invalid_argument("a device needs at least one SM (compute unit)");
    if (spec.sms > kMaxSms)
        throw std::invalid_argument("more than " + std::to_string(kMaxSms) + " SMs (" + std::to_string(spec.sms) + ")");
    if (spec.max_warps_per_sm == 0)
        throw std::invalid_argument("max_warps_per_sm is 0");
    if (spec.max_blocks_per_sm == 0)
        throw std::invalid_argument("max_blocks_per_sm is 0");
    // Grant::sm_blocks counts blocks per SM in a byte.
    if (spec.max_blocks_per_sm > 255)
        throw std::invalid_argument("max_blocks_per_sm above 255 (" + std::to_string(spec.max_blocks_per_sm) + ")");
    // DeviceState::sm_warps counts warps per SM in 16 bits.
    if (spec.max_warps_per_sm > 65535)
        throw std::invalid_argument("max_warps_per_sm above 65535 (" + std::to_string(spec.max_warps_per_sm) + ")");
    if (spec.warp_size == 0)
        throw std::invalid_argument("warp_size is 0");
}

}  // namespace hetpu::mgb
