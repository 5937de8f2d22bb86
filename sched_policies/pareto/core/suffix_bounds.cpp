// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/suffix_bounds.h"

#include <algorithm>
#include <limits>

namespace hetpu {
namespace detail {

void SuffixBounds::assign(const ProfileTable &tab, double max_energy, double max_time)
{
    n_ = tab.workload();
    const int p = tab.procs();
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t width = static_cast<std::size_t>(n_) + 1;
    energy_.assign((p + 1) * width, inf);
    time_.assign((p + 1) * width, inf);
    energy_[idx(p, 0)] = 0.0;
    time_[idx(p, 0)] = 0.0;
    // HEPOPTA reads row c only at r = n - s for partial sums s that processors 0..c-1 can
    // hold, so r >= n - (their largest sizes); rows are computed from there up.
    std::vector<Granules> prefix(p + 1, 0);
    for (int c = 0; c < p; ++c)
        prefix[c + 1] = prefix[c] + (tab.largest(c));
    Granules reach = 0;  // largest r row c+1 can hold
    for (int c = p - 1; c >= 0; --c) {
        const Granules lo = std::max<Granules>(0, n_ - prefix[c]);
        const double *e_in = &energy_[idx(c + 1, 0)], *t_in = &time_[idx(c + 1, 0)];
        double *e_out = &energy_[idx(c, 0)], *t_out = &time_[idx(c, 0)];
        std::copy(e_in + lo, e_in + width, e_out + lo);  // idle on processor c
        std::copy(t_in + lo, t_in + width, t_out + lo);
        Granules big = 0;
        for (const auto &[x, x_time, x_energy] : tab.points(c)) {
            const double ex = x_energy, tx = x_time;
            if (ex > max_energy || tx > max_time)
                continue;
            big = x;
            // Branch-free min/max over contiguous rows, which the compiler vectorises.
            const Granules from = std::max(lo, x), to = std::min(n_, reach + x);
            for (Granules r = from; r <= to; ++r) {
                const double e = e_in[r - x] + ex;
                const double t = t_in[r - x] > tx ? t_in[r - x] : tx;
                e_out[r] = e < e_out[r] ? e : e_out[r];
                t_out[r] = t < t_out[r] ? t : t_out[r];
            }
        }
        reach += big;
    }
}

}  // namespace detail
}  // namespace hetpu
