#include "sched_policies/core/cheapest_within.h"

#include <limits>

namespace hetpu {
namespace detail {

std::vector<Granules> cheapest_within(const ProfileTable &tab, double time_cap)
{
    const int p = tab.procs();
    const Granules n = tab.workload();
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t width = static_cast<std::size_t>(n) + 1;
    std::vector<double> e(width, inf), e_next(width);
    std::vector<int> k(width, 0), k_next(width);
    std::vector<std::vector<Granules>> choice(p, std::vector<Granules>(width, -1));
    e[0] = 0.0;
    for (int i = 0; i < p; ++i) {
        e_next = e;  // idle
        k_next = k;
        for (std::size_t s = 0; s < width; ++s)
            if (e[s] < inf)
                choice[i][s] = 0;
        for (Granules x : tab.sizes(i)) {
            if (tab.time(i, x) > time_cap)
                continue;
            const double ex = tab.energy(i, x);
            for (Granules s = x; s <= n; ++s) {
                if (e[s - x] == inf)
                    continue;
                const double cand = e[s - x] + ex;
                const int kc = k[s - x] + 1;
                if (cand < e_next[s] || (cand == e_next[s] && kc < k_next[s])) {
                    e_next[s] = cand;
                    k_next[s] = kc;
                    choice[i][s] = x;
                }
            }
        }
        e.swap(e_next);
        k.swap(k_next);
    }
    if (e[n] == inf)
        return {};
    std::vector<Granules> sizes(p, 0);
    Granules rest = n;
    for (int i = p - 1; i >= 0; --i) {
        sizes[i] = choice[i][rest];
        rest -= sizes[i];
    }
    return sizes;
}

}  // namespace detail
}  // namespace hetpu
