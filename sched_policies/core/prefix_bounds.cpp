#include "sched_policies/core/prefix_bounds.h"

#include <algorithm>
#include <limits>

namespace hetpu {
namespace detail {

PrefixBounds::PrefixBounds(const ProfileTable &tab, double max_energy, double max_time)
    : n_(tab.workload())
{
    const int p = tab.procs();
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t width = static_cast<std::size_t>(n_) + 1;
    energy_.assign((p + 1) * width, inf);
    time_.assign((p + 1) * width, inf);
    energy_[idx(0, 0)] = 0.0;
    time_[idx(0, 0)] = 0.0;
    for (int c = 0; c < p; ++c) {
        // Idle on processor c.
        std::copy(energy_.begin() + idx(c, 0), energy_.begin() + idx(c, 0) + width, energy_.begin() + idx(c + 1, 0));
        std::copy(time_.begin() + idx(c, 0), time_.begin() + idx(c, 0) + width, time_.begin() + idx(c + 1, 0));
        for (Granules x : tab.sizes(c)) {
            const double ex = tab.energy(c, x), tx = tab.time(c, x);
            if (ex > max_energy || tx > max_time)
                continue;
            const double *e_in = &energy_[idx(c, 0)], *t_in = &time_[idx(c, 0)];
            double *e_out = &energy_[idx(c + 1, 0)], *t_out = &time_[idx(c + 1, 0)];
            for (Granules r = x; r <= n_; ++r) {
                e_out[r] = std::min(e_out[r], e_in[r - x] + ex);
                t_out[r] = std::min(t_out[r], std::max(t_in[r - x], tx));
            }
        }
    }
}

}  // namespace detail
}  // namespace hetpu
