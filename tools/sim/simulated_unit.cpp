// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/sim/simulated_unit.h"

#include <algorithm>

namespace hetpu::sim {

double SimulatedUnit::exec_time(double x) const
{
    const auto &p = spec_.profile;
    if (x <= 0)
        return 0;
    if (p.size() == 1)
        return p[0].second * x / p[0].first;
    size_t hi = 1;
    while (hi + 1 < p.size() && x > p[hi].first)
        ++hi;
    const auto &[x0, t0] = p[hi - 1];
    const auto &[x1, t1] = p[hi];
    const double line = t0 + (t1 - t0) * (x - x0) / (x1 - x0);
    // Below the first point the first segment's line may fall to zero (a steep ramp out of
    // a small fixed cost): a block would then cost nothing, and a policy that cuts small
    // blocks would finish the job in no time. A smaller block costs no more than the first
    // point and no less per element than it.
    if (x < x0)
        return std::clamp(line, t0 * x / x0, t0);
    return std::max(0.0, line);
}

double SimulatedUnit::factor_at(double t) const
{
    double f = 1.0;
    for (const auto &[when, factor] : spec_.slowdown)
        if (t >= when)
            f = factor;
    return f;
}

BlockCost SimulatedUnit::cost(uint64_t x, double start, std::mt19937_64 &rng) const
{
    BlockCost c = nominal_cost(x);
    double m = factor_at(start);
    if (spec_.noise > 0) {
        std::normal_distribution<double> noise(1.0, spec_.noise);
        m *= std::clamp(noise(rng), 0.2, 5.0);
    }
    c.exec_s *= m;
    c.transfer_s *= m;
    if (spec_.stall_probability > 0 && x > 0) {
        std::bernoulli_distribution stall(spec_.stall_probability);
        if (stall(rng))
            c.stall_s = spec_.stall_s;
    }
    return c;
}

}  // namespace hetpu::sim
