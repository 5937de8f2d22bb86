// SPDX-License-Identifier: LGPL-2.1-or-later
// The inner step of the subset-sum searches (HPOPTA's time limit, the load-balanced time
// window): the partial sums reachable with one more processor are those reachable before,
// shifted by each of its sizes. Bit s of a word vector is set when sum s is reachable.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sched_policies/pareto/core/pareto_profiles.h"

namespace hetpu {

// dst[w] |= (src << shift)[w] for words wlo..whi; only those words are touched, so a
// search can keep the sums that may still matter and skip the rest.
inline void or_shifted(std::vector<std::uint64_t> &dst, const std::vector<std::uint64_t> &src, Granules shift,
                       std::size_t wlo, std::size_t whi)
{
    const std::size_t ws = static_cast<std::size_t>(shift / 64);
    const unsigned bs = static_cast<unsigned>(shift % 64);
    for (std::size_t w = std::max(wlo, ws); w <= whi; ++w) {
        std::uint64_t v = src[w - ws] << bs;
        if (bs != 0 && w - ws >= 1)
            v |= src[w - ws - 1] >> (64 - bs);
        dst[w] |= v;
    }
}

}  // namespace hetpu
