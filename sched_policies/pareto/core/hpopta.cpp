// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/pareto/core/hpopta.h"

#include "sched_policies/pareto/core/cheapest_within.h"
#include "sched_policies/pareto/core/shifted_bits.h"
#include "sched_policies/pareto/core/workspace_buffers.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace hetpu {
namespace detail {

namespace {

class Reachability {
public:
    Reachability(const ProfileTable &tab, FastestScratch &scratch)
        : tab_(tab), words_(static_cast<std::size_t>(tab.workload() / 64 + 1)), reach_(scratch.reach),
          next_(scratch.next), big_(scratch.big)
    {
        reach_.assign(words_, 0);
        next_.assign(words_, 0);
    }

    // Can n be formed using, on each processor, idle or a point whose time is <= limit?
    bool operator()(double limit)
    {
        const int p = tab_.procs();
        const Granules n = tab_.workload();
        std::vector<Granules> &big = big_;
        big.assign(p, 0);
        for (int i = 0; i < p; ++i)
            for (const auto &[x, x_time, x_energy] : tab_.points(i))
                if (x_time <= limit)
                    big[i] = x;
        Granules suffix = 0;
        for (int i = 0; i < p; ++i)
            suffix += big[i];
        if (suffix < n)
            return false;
        std::fill(reach_.begin(), reach_.end(), 0);
        reach_[0] = 1;  // the empty prefix sums to 0
        Granules prefix = 0;
        for (int i = 0; i + 1 < p; ++i) {
            // Partial sums worth keeping after processor i: [n - suffix of i+1.., min(n, prefix)];
            // every bit outside is left 0, which is harmless because no completion reads it.
            suffix -= big[i];
            prefix += big[i];
            const std::size_t wlo = static_cast<std::size_t>(std::max<Granules>(0, n - suffix) / 64);
            const std::size_t whi = static_cast<std::size_t>(std::min(n, prefix) / 64);
            std::fill(next_.begin(), next_.end(), 0);
            for (std::size_t w = wlo; w <= whi; ++w)
                next_[w] = reach_[w];  // idle
            for (const auto &[x, x_time, x_energy] : tab_.points(i))
                if (x_time <= limit)
                    or_shifted(next_, reach_, x, wlo, whi);
            reach_.swap(next_);
        }
        // The last processor only has to close the gap to n.
        auto bit = [&](Granules s) { return (reach_[static_cast<std::size_t>(s / 64)] >> (s % 64)) & 1u; };
        if (bit(n))
            return true;
        for (const auto &[x, x_time, x_energy] : tab_.points(p - 1))
            if (x_time <= limit && bit(n - x))
                return true;
        return false;
    }

private:
    const ProfileTable &tab_;
    std::size_t words_;
    std::vector<std::uint64_t> &reach_, &next_;
    std::vector<Granules> &big_;
};

}  // namespace

std::vector<Granules> fastest_sizes(const ProfileTable &tab)
{
    FastestScratch scratch;
    return fastest_sizes(tab, scratch);
}

std::vector<Granules> fastest_sizes(const ProfileTable &tab, FastestScratch &scratch)
{
    const int p = tab.procs();
    const Granules n = tab.workload();
    if (n == 0)
        return std::vector<Granules>(p, 0);
    std::vector<double> &times = scratch.times;  // distinct, ascending
    times.clear();
    for (int i = 0; i < p; ++i)
        for (const auto &[x, x_time, x_energy] : tab.points(i))
            times.push_back(x_time);
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());

    // Counting bound: below the first time at which the largest usable sizes add up to n,
    // n cannot be formed at all. The sum grows with the time limit, so a binary search over
    // the times finds it.
    auto enough = [&](double limit) {
        Granules total = 0;
        for (int i = 0; i < p; ++i) {
            Granules big = 0;
            for (const auto &[x, x_time, x_energy] : tab.points(i))
                if (x_time <= limit)
                    big = x;  // sizes ascend
            total += big;
        }
        return total >= n;
    };
    if (times.empty() || !enough(times.back()))
        return {};
    Reachability reachable(tab, scratch);
    // Galloping from the bound: the optimum is usually at or just above it, and
    // reachability is monotone in the limit.
    std::size_t fail = static_cast<std::size_t>(
        std::partition_point(times.begin(), times.end(), [&](double t) { return !enough(t); }) - times.begin());
    std::size_t ok = fail, step = 1;
    bool found = false;
    bool below_bound = true;  // `fail` is not yet a tested index
    while (ok < times.size()) {
        if (reachable(times[ok])) {
            found = true;
            break;
        }
        below_bound = false;
        fail = ok;
        if (ok == times.size() - 1)
            break;
        ok = std::min(times.size() - 1, ok + step);
        step *= 2;
    }
    if (!found)
        return {};
    if (!below_bound) {
        // Invariant: times[fail] unreachable, times[ok] reachable.
        while (ok - fail > 1) {
            const std::size_t mid = fail + (ok - fail) / 2;
            if (reachable(times[mid]))
                ok = mid;
            else
                fail = mid;
        }
    }
    // Cheapest (energy, then active count) distribution within that makespan.
    return cheapest_within(tab, times[ok], scratch.cheapest);
}

}  // namespace detail

Distribution hpopta(const std::vector<ProcessorProfile> &profiles, Granules n)
{
    ParetoWorkspace workspace;
    return hpopta(profiles, n, workspace);
}

Distribution hpopta(const std::vector<ProcessorProfile> &profiles, Granules n, ParetoWorkspace &workspace)
{
    validate_profiles(profiles, n);
    detail::WorkspaceBuffers &ws = workspace.buffers();
    detail::ProfileTable &tab = ws.table;
    tab.assign(profiles, n);
    const std::vector<Granules> sizes = detail::fastest_sizes(tab, ws.fastest);
    if (sizes.empty())
        throw UnreachableWorkloadError("pareto: workload n=" + std::to_string(n) +
                                       " granules cannot be formed as a sum of one profile size (or 0) per processor");
    return evaluate_distribution(profiles, sizes);
}

}  // namespace hetpu
