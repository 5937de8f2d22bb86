// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/optimum.h"

#include <algorithm>
#include <stdexcept>

namespace hetpu::sim {

namespace {

// Largest block k * granule + residue (at most the workload) the unit finishes within t,
// or -1 when even the smallest such block does not fit.
int64_t largest_block_within(const SimulatedUnit &u, double t, uint64_t granule, uint64_t residue, uint64_t workload)
{
    if (residue > workload)
        return -1;
    uint64_t lo = 0, hi = (workload - residue) / granule;
    if (u.nominal_cost(residue).total() > t)
        return -1;
    while (lo < hi) {
        uint64_t mid = (lo + hi + 1) / 2;
        if (u.nominal_cost(mid * granule + residue).total() <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return static_cast<int64_t>(lo * granule + residue);
}

// Blocks are granule multiples except at most one, which also holds the remainder r of
// the workload. With times non-decreasing in the size, a makespan t is feasible iff,
// giving every unit its largest multiple within t and one unit its largest
// "remainder-sized" block within t, the sizes add up to at least the workload: the excess
// is a multiple of the granule and can be taken back in granule steps, which never makes
// a unit slower. Returns the blocks (summing exactly to the workload) or empty.
std::vector<uint64_t> fit_within(const std::vector<SimulatedUnit> &units, double t, uint64_t workload, uint64_t granule)
{
    const uint64_t r = workload % granule;
    std::vector<uint64_t> blocks;
    uint64_t sum = 0;
    for (const auto &u : units) {
        blocks.push_back(static_cast<uint64_t>(largest_block_within(u, t, granule, 0, workload)));
        sum += blocks.back();
    }
    if (r != 0) {
        // The remainder goes where it adds most.
        int best = -1;
        int64_t best_gain = 0;
        for (size_t i = 0; i < units.size(); ++i) {
            int64_t q = largest_block_within(units[i], t, granule, r, workload);
            if (q < 0)
                continue;
            int64_t gain = q - static_cast<int64_t>(blocks[i]);
            if (best < 0 || gain > best_gain) {
                best = static_cast<int>(i);
                best_gain = gain;
            }
        }
        if (best < 0)
            return {};
        sum = sum - blocks[best] + static_cast<uint64_t>(static_cast<int64_t>(blocks[best]) + best_gain);
        blocks[best] = static_cast<uint64_t>(static_cast<int64_t>(blocks[best]) + best_gain);
    }
    if (sum < workload)
        return {};
    uint64_t excess = sum - workload;  // a multiple of the granule
    for (size_t i = units.size(); i-- > 0 && excess > 0;) {
        uint64_t take = std::min(excess, blocks[i] / granule * granule);
        blocks[i] -= take;
        excess -= take;
    }
    return excess == 0 ? blocks : std::vector<uint64_t>{};
}

}  // namespace

bool optimum_needs_bisection(size_t units, uint64_t workload, uint64_t granule)
{
    const uint64_t steps = workload / granule;  // plus one (size 0), left out: it can overflow
    const uint64_t per_step = workload % granule ? 2 : 1;
    // Compared by division: (steps + 1) * units * per_step can overflow 64 bits.
    return steps >= kMaxOptimumCandidates / per_step / units;
}

void check_optimum_job(size_t units, uint64_t workload, uint64_t granule)
{
    if (granule == 0 || units == 0)
        throw std::invalid_argument("the optimum needs a positive granule and at least one unit");
    (void)workload;  // any size: past the candidate list's bound the search bisects
}

StaticDistribution optimum_distribution(const std::vector<SimulatedUnit> &units, uint64_t workload, uint64_t granule)
{
    check_optimum_job(units.size(), workload, granule);
    // Cluster-sized scenarios (1,024 units, millions of granules) have too many candidate
    // makespans to list (the list below ran out of memory): bisect on the makespan instead.
    // Feasibility is monotone in t, so the bracket closes on the optimum from above; the
    // result is the largest block cost of the distribution found there.
    if (optimum_needs_bisection(units.size(), workload, granule)) {
        double lo = 0, hi = 0;
        for (size_t i = 0; i < units.size(); ++i) {
            const double all = units[i].nominal_cost(workload).total();
            hi = i == 0 ? all : std::min(hi, all);  // one unit taking everything is feasible
        }
        for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; ++it) {
            const double mid = 0.5 * (lo + hi);
            if (!fit_within(units, mid, workload, granule).empty())
                hi = mid;
            else
                lo = mid;
        }
        StaticDistribution d;
        d.blocks = fit_within(units, hi, workload, granule);
        for (size_t i = 0; i < units.size(); ++i)
            d.makespan_s = std::max(d.makespan_s, units[i].nominal_cost(d.blocks[i]).total());
        return d;
    }
    // Candidate makespans: every time a unit can have (blocks of k * granule, with or
    // without the remainder). The optimum is one of them.
    const uint64_t r = workload % granule;
    std::vector<double> candidates;
    for (const auto &u : units)
        for (uint64_t base = 0; base <= workload; base += granule) {
            candidates.push_back(u.nominal_cost(base).total());
            if (r && base + r <= workload)
                candidates.push_back(u.nominal_cost(base + r).total());
        }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());

    size_t lo = 0, hi = candidates.size() - 1;  // one unit taking everything is feasible
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (!fit_within(units, candidates[mid], workload, granule).empty())
            hi = mid;
        else
            lo = mid + 1;
    }
    StaticDistribution d;
    d.blocks = fit_within(units, candidates[lo], workload, granule);
    for (size_t i = 0; i < units.size(); ++i)
        d.makespan_s = std::max(d.makespan_s, units[i].nominal_cost(d.blocks[i]).total());
    return d;
}

}  // namespace hetpu::sim
