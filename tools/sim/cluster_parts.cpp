// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/cluster_parts.h"

#include "tools/sim/cluster_sim.h"

namespace hetpu::sim {

namespace cluster_parts {

namespace {

// Elements a unit finishes by time t when it starts at 0 (noise-free, at the slowdown in
// force from the start).
uint64_t elements_by(const SimulatedUnit &u, double t, uint64_t cap)
{
    const double factor = u.factor_at(0);
    if (u.nominal_cost(1).total() * factor > t)
        return 0;
    uint64_t lo = 1, hi = cap;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo + 1) / 2;
        if (u.nominal_cost(mid).total() * factor <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

}  // namespace

double nominal_bound(const std::vector<SimulatedUnit> &units, uint64_t workload)
{
    double lo = 0, hi = 1;
    auto enough = [&](double t) {
        uint64_t sum = 0;
        for (const SimulatedUnit &u : units)
            if ((sum += elements_by(u, t, workload)) >= workload)
                return true;
        return false;
    };
    while (!enough(hi))
        hi *= 2;
    for (int i = 0; i < 60 && hi - lo > 1e-6 * hi; ++i)
        (enough((lo + hi) / 2) ? hi : lo) = (lo + hi) / 2;
    return hi;
}

double nominal_rate(const std::vector<SimulatedUnit> &units, uint64_t block)
{
    block = std::max<uint64_t>(block, 1);
    double rate = 0;
    for (const SimulatedUnit &u : units) {
        const double s = u.nominal_cost(block).total();
        if (s > 0)
            rate += static_cast<double>(block) / s;
    }
    return rate;
}

double planner_call_s(size_t pus) { return 200e-6 + 25e-6 * static_cast<double>(pus); }

std::vector<std::pair<int, Block>> share_lost(const std::vector<Block> &lost, const std::vector<int> &live,
                                              const std::vector<double> &rates, const BlockRules &rules)
{
    double total_rate = 0;
    for (double r : rates)
        total_rate += std::max(r, 1e-9);
    uint64_t lost_total = 0;
    for (const Block &b : lost)
        lost_total += b.count;
    size_t li = 0;
    uint64_t given = 0, quota = 0;
    auto quota_of = [&](size_t i) {
        return static_cast<uint64_t>(static_cast<double>(lost_total) * std::max(rates[i], 1e-9) / total_rate);
    };
    quota = quota_of(0);
    std::vector<std::pair<int, Block>> pieces;
    for (const Block &b : lost) {
        uint64_t off = b.offset, left = b.count;
        while (left > 0) {
            uint64_t take = li + 1 == live.size() ? left : std::min(left, quota > given ? quota - given : 0);
            take = take / rules.granule * rules.granule;
            if (take < rules.min_block || left - take < rules.min_block)
                take = li + 1 == live.size() || take == 0 ? left : take;
            if (take == 0) {
                ++li;
                given = 0;
                quota = quota_of(li);
                continue;
            }
            pieces.push_back({live[li], {off, take}});
            off += take;
            left -= take;
            given += take;
            if (given >= quota && li + 1 < live.size()) {
                ++li;
                given = 0;
                quota = quota_of(li);
            }
        }
    }
    return pieces;
}

}  // namespace cluster_parts

double cluster_bound(const ClusterScenario &cluster)
{
    // A lower bound: slowdowns that start later and failures are left out.
    std::vector<SimulatedUnit> units;
    for (const ClusterNode &n : cluster.nodes)
        for (const UnitSpec &u : n.units)
            units.emplace_back(u);
    return cluster_parts::nominal_bound(units, cluster.workload);
}

}  // namespace hetpu::sim
