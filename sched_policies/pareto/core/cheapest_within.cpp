// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/cheapest_within.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace hetpu {
namespace detail {

std::vector<Granules> cheapest_within(const ProfileTable &tab, double time_cap)
{
    CheapestScratch scratch;
    return cheapest_within(tab, time_cap, scratch);
}

std::vector<Granules> cheapest_within(const ProfileTable &tab, double time_cap, CheapestScratch &scratch)
{
    const int p = tab.procs();
    const Granules n = tab.workload();
    const double inf = std::numeric_limits<double>::infinity();

    // Largest size within the cap per processor, and the band [lo_i, hi_i] of partial sums
    // after processors 0..i that can still be completed to exactly n.
    std::vector<Granules> big(p, 0), lo(p), hi(p);
    for (int i = 0; i < p; ++i)
        for (const auto &[x, x_time, x_energy] : tab.points(i))
            if (x_time <= time_cap)
                big[i] = x;  // sizes ascend
    Granules suffix = 0, prefix = 0;
    for (int i = p - 1; i >= 0; --i) {
        lo[i] = std::max<Granules>(0, n - suffix);
        suffix += big[i];
    }
    if (suffix < n)
        return {};
    std::vector<std::size_t> base(p + 1, 0);  // choice of processor i for sum s at base[i] + s - lo[i]
    for (int i = 0; i < p; ++i) {
        prefix += big[i];
        hi[i] = std::min(n, prefix);
        if (lo[i] > hi[i])
            return {};
        base[i + 1] = base[i] + static_cast<std::size_t>(hi[i] - lo[i] + 1);
    }

    std::vector<double> &e = scratch.e, &e_next = scratch.e_next;
    std::vector<int> &k = scratch.k, &k_next = scratch.k_next;
    std::vector<std::int32_t> &choice = scratch.choice;
    e.assign(1, 0.0);
    k.assign(1, 0);
    choice.assign(base[p], -1);
    Granules plo = 0, phi = 0;  // band of the previous prefix (the empty one: {0})
    for (int i = 0; i < p; ++i) {
        const std::size_t width = static_cast<std::size_t>(hi[i] - lo[i] + 1);
        e_next.assign(width, inf);
        k_next.assign(width, 0);
        std::int32_t *ch = &choice[base[i]];
        // Idle.
        for (Granules s = std::max(lo[i], plo); s <= std::min(hi[i], phi); ++s)
            if (e[s - plo] < inf) {
                e_next[s - lo[i]] = e[s - plo];
                k_next[s - lo[i]] = k[s - plo];
                ch[s - lo[i]] = 0;
            }
        for (const auto &[x, x_time, x_energy] : tab.points(i)) {
            if (x_time > time_cap)
                continue;
            const double ex = x_energy;
            const Granules from = std::max(lo[i], plo + x), to = std::min(hi[i], phi + x);
            for (Granules s = from; s <= to; ++s) {
                const double prev = e[s - x - plo];
                if (prev == inf)
                    continue;
                const double cand = prev + ex;
                const int kc = k[s - x - plo] + 1;
                double &best = e_next[s - lo[i]];
                if (cand < best || (cand == best && kc < k_next[s - lo[i]])) {
                    best = cand;
                    k_next[s - lo[i]] = kc;
                    ch[s - lo[i]] = static_cast<std::int32_t>(x);
                }
            }
        }
        e.swap(e_next);
        k.swap(k_next);
        plo = lo[i];
        phi = hi[i];
    }
    if (plo != n || e[0] == inf)  // the last band is {n} when n is reachable at all
        return {};
    std::vector<Granules> sizes(p, 0);
    Granules rest = n;
    for (int i = p - 1; i >= 0; --i) {
        sizes[i] = choice[base[i] + static_cast<std::size_t>(rest - lo[i])];
        rest -= sizes[i];
    }
    return sizes;
}

}  // namespace detail
}  // namespace hetpu
