// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/load_balanced.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "sched_policies/pareto/core/profile_table.h"
#include "sched_policies/pareto/core/shifted_bits.h"

namespace hetpu {

namespace {

using detail::ProfileTable;
using Bits = std::vector<std::uint64_t>;

// Can n be formed with every processor of `set` active at a point whose time lies in
// [lo, hi] and every other processor idle?
//
// The two-pointer search below asks this for thousands of windows, most of them hopeless,
// so the cheap necessary condition (the smallest usable sizes add up to at most n, the
// largest to at least n) is checked first; the subset-sum then keeps only the partial sums
// that can still become n and lets the last processor just look up n - x.
bool feasible(const ProfileTable &tab, const std::vector<int> &set, double lo, double hi)
{
    const Granules n = tab.workload();
    const std::size_t k = set.size();
    std::vector<Granules> small(k, 0), big(k, 0);
    Granules low_sum = 0, high_sum = 0;
    for (std::size_t j = 0; j < k; ++j) {
        for (const auto &[x, x_time, x_energy] : tab.points(set[j]))
            if (x_time >= lo && x_time <= hi) {
                if (small[j] == 0)
                    small[j] = x;  // sizes ascend
                big[j] = x;
            }
        if (big[j] == 0)
            return false;
        low_sum += small[j];
        high_sum += big[j];
    }
    if (low_sum > n || high_sum < n)
        return false;
    const std::size_t words = static_cast<std::size_t>(n / 64 + 1);
    Bits reach(words, 0), next(words, 0);
    reach[0] = 1;
    Granules suffix = high_sum, prefix = 0;
    for (std::size_t j = 0; j + 1 < k; ++j) {
        const int i = set[j];
        suffix -= big[j];
        prefix += big[j];
        const std::size_t wlo = static_cast<std::size_t>(std::max<Granules>(0, n - suffix) / 64);
        const std::size_t whi = static_cast<std::size_t>(std::min(n, prefix) / 64);
        std::fill(next.begin(), next.end(), 0);
        for (const auto &[x, x_time, x_energy] : tab.points(i))
            if (x_time >= lo && x_time <= hi)
                or_shifted(next, reach, x, wlo, whi);
        reach.swap(next);
    }
    const int last = set[k - 1];
    for (const auto &[x, x_time, x_energy] : tab.points(last))
        if (x <= n && x_time >= lo && x_time <= hi &&
            ((reach[static_cast<std::size_t>((n - x) / 64)] >> ((n - x) % 64)) & 1u))
            return true;
    return false;
}

struct Window {
    std::vector<int> set;
    double lo = 0, hi = 0;
};

// The least-spread window for `set`, or false when no all-active distribution exists.
bool best_window(const ProfileTable &tab, const std::vector<int> &set, Window &out)
{
    std::vector<double> times;
    for (int i : set)
        for (const auto &[x, x_time, x_energy] : tab.points(i))
            times.push_back(x_time);
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    if (times.empty() || !feasible(tab, set, times.front(), times.back()))
        return false;
    bool found = false;
    std::size_t b = 0;
    for (std::size_t a = 0; a < times.size(); ++a) {
        if (b < a)
            b = a;
        while (b < times.size() && !feasible(tab, set, times[a], times[b]))
            ++b;
        if (b == times.size())
            break;  // a larger lower bound only shrinks the windows
        const double spread = times[b] - times[a];
        if (!found || spread < out.hi - out.lo || (spread == out.hi - out.lo && times[b] < out.hi)) {
            out = {set, times[a], times[b]};
            found = true;
        }
    }
    return found;
}

// The least-energy all-active distribution of `w.set` inside the window (energies summed in
// processor order, as evaluate_distribution() does).
std::vector<Granules> cheapest_in_window(const ProfileTable &tab, const Window &w)
{
    const Granules n = tab.workload();
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t k = w.set.size();
    std::vector<std::vector<double>> best(k + 1, std::vector<double>(static_cast<std::size_t>(n + 1), inf));
    std::vector<std::vector<Granules>> pick(k, std::vector<Granules>(static_cast<std::size_t>(n + 1), 0));
    best[0][0] = 0;
    for (std::size_t j = 0; j < k; ++j) {
        const int i = w.set[j];
        for (Granules s = 0; s <= n; ++s) {
            if (best[j][s] == inf)
                continue;
            for (const auto &[x, x_time, x_energy] : tab.points(i)) {
                if (s + x > n)
                    break;
                const double t = x_time;
                if (t < w.lo || t > w.hi)
                    continue;
                const double e = best[j][s] + x_energy;
                if (e < best[j + 1][s + x]) {
                    best[j + 1][s + x] = e;
                    pick[j][s + x] = x;
                }
            }
        }
    }
    std::vector<Granules> sizes(static_cast<std::size_t>(tab.procs()), 0);
    Granules s = n;
    for (std::size_t j = k; j-- > 0;) {
        const Granules x = pick[j][s];
        sizes[w.set[j]] = x;
        s -= x;
    }
    return sizes;
}

}  // namespace

LoadBalanced load_balanced_distribution(const std::vector<ProcessorProfile> &profiles, Granules n, double base_power_w)
{
    validate_profiles(profiles, n);
    validate_base_power(base_power_w);
    if (n == 0) {
        LoadBalanced lb;
        lb.distribution = evaluate_distribution(profiles, std::vector<Granules>(profiles.size(), 0), base_power_w);
        return lb;
    }
    const ProfileTable tab(profiles, n);
    const int p = tab.procs();
    std::vector<int> all(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i)
        all[i] = i;

    Window best;
    bool found = best_window(tab, all, best);
    if (!found && p > 16)
        throw InvalidProfileError("load-balanced distribution: no distribution keeps all " + std::to_string(p) +
                                  " processors busy, and searching subsets of more than 16 is not supported");
    for (int k = p - 1; k >= 1 && !found; --k) {
        // Every set of k processors, the best window over all of them.
        for (std::uint32_t mask = 0; mask < (1u << p); ++mask) {
            if (__builtin_popcount(mask) != k)
                continue;
            std::vector<int> set;
            for (int i = 0; i < p; ++i)
                if (mask & (1u << i))
                    set.push_back(i);
            Window w;
            if (!best_window(tab, set, w))
                continue;
            const double spread = w.hi - w.lo, best_spread = best.hi - best.lo;
            if (!found || spread < best_spread || (spread == best_spread && w.hi < best.hi)) {
                best = w;
                found = true;
            }
        }
    }
    if (!found)
        throw UnreachableWorkloadError("pareto: workload n=" + std::to_string(n) +
                                       " granules cannot be formed as a sum of one profile size (or 0) per processor");
    LoadBalanced lb;
    lb.distribution = evaluate_distribution(profiles, cheapest_in_window(tab, best), base_power_w);
    lb.spread_s = best.hi - best.lo;
    return lb;
}

}  // namespace hetpu
