// SPDX-License-Identifier: LGPL-2.1-or-later
// The arithmetic of bench/ckpt_rtm_device's codelets, shared by the CPU codelets, the host
// reference and the CUDA kernels (the OpenCL source in ckpt_rtm_codelets.cpp spells the same
// formulas). Integer arithmetic on values below 2^16, stored as floats (exact below 2^24), so
// every device computes the same bits and a restored version can be compared exactly.
#pragma once

#include <stdint.h>

#ifdef __CUDACC__
#define HETPU_RTM_HD __host__ __device__
#else
#define HETPU_RTM_HD
#endif

// Threads of the one work-group that computes a block's digest (a power of two).
#define HETPU_RTM_DIGEST_GROUP 64

// One time step of element i (its index in the whole wavefield) of value v.
static inline HETPU_RTM_HD uint32_t hetpu_rtm_step_value(uint32_t v, uint64_t i, uint32_t step)
{
    return (v * 5u + step * 3u + static_cast<uint32_t>(i % 13u)) % 65521u;
}

// Element i's term of a block's digest: a hash of its bit pattern and its index. The digest
// is the sum of the terms modulo 2^64, which does not depend on the order of the additions,
// so a parallel reduction gives the host's result exactly.
static inline HETPU_RTM_HD uint64_t hetpu_rtm_digest_term(uint32_t bits, uint64_t i)
{
    const uint64_t h = ((static_cast<uint64_t>(bits) << 32) | (i & 0xffffffffu)) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 31);
}
