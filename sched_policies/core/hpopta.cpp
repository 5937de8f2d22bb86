#include "sched_policies/core/hpopta.h"

#include "sched_policies/core/cheapest_within.h"
#include "sched_policies/core/profile_table.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace hetpu {

namespace {

using detail::ProfileTable;
using Bits = std::vector<std::uint64_t>;

// dst |= src << shift, on bitsets of equal length (bits past the end fall off).
void or_shifted(Bits &dst, const Bits &src, Granules shift)
{
    const std::size_t words = dst.size();
    const std::size_t ws = static_cast<std::size_t>(shift / 64);
    const unsigned bs = static_cast<unsigned>(shift % 64);
    if (ws >= words)
        return;
    for (std::size_t j = words; j-- > ws;) {
        std::uint64_t v = src[j - ws] << bs;
        if (bs != 0 && j - ws >= 1)
            v |= src[j - ws - 1] >> (64 - bs);
        dst[j] |= v;
    }
}

// Can n be formed using, on each processor, idle or a point whose time is <= limit?
bool reachable_within(const ProfileTable &tab, double limit)
{
    const Granules n = tab.workload();
    const std::size_t words = static_cast<std::size_t>(n / 64 + 1);
    Bits reach(words, 0), next(words, 0);
    reach[0] = 1;  // the empty prefix sums to 0
    for (int i = 0; i < tab.procs(); ++i) {
        next = reach;  // idle
        for (Granules x : tab.sizes(i))
            if (tab.time(i, x) <= limit)
                or_shifted(next, reach, x);
        reach.swap(next);
    }
    return (reach[static_cast<std::size_t>(n / 64)] >> (n % 64)) & 1u;
}

}  // namespace

Distribution hpopta(const std::vector<ProcessorProfile> &profiles, Granules n)
{
    validate_profiles(profiles, n);
    const ProfileTable tab(profiles, n);
    const int p = tab.procs();

    std::vector<double> times{0.0};  // makespan 0 is the answer only for n == 0
    for (int i = 0; i < p; ++i)
        for (Granules x : tab.sizes(i))
            times.push_back(tab.time(i, x));
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());

    if (!reachable_within(tab, times.back()))
        throw UnreachableWorkloadError(
            "pareto: workload n=" + std::to_string(n) +
            " granules cannot be formed as a sum of one profile size (or 0) per processor");
    // Smallest index whose time makes n reachable; reachability is monotone in the limit.
    std::size_t lo = 0, hi = times.size() - 1;
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (reachable_within(tab, times[mid]))
            hi = mid;
        else
            lo = mid + 1;
    }
    const double t_opt = times[lo];

    // Cheapest (energy, then active count) distribution within that makespan.
    const std::vector<Granules> sizes = detail::cheapest_within(tab, t_opt);
    return evaluate_distribution(profiles, sizes);
}

}  // namespace hetpu
