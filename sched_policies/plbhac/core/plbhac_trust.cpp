// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_trust.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace hetpu {

// Flat: between its largest block and the largest of at most half that size, the time grew
// by less than the square root of the size ratio. A block then costs at most trust^2 times
// that flat time, and an accelerator with a launch cost reaches its share in fewer blocks.
// A warm start reads it off its saved blocks until this run has measured two sizes: its
// first solve is often its final one, and a flat GPU held to `trust` times its saved blocks
// would leave most of its share to the PUs beside it.
double plbhac_trust_of(const PlbhacPuState &pu, double trust)
{
    const auto widest = [](const std::vector<std::pair<double, double>> &blocks, double &x_lo, double &t_lo,
                           double &x_hi, double &t_hi) {
        x_hi = t_hi = x_lo = t_lo = 0;
        for (const auto &[x, t] : blocks)
            if (x > x_hi) {
                x_hi = x;
                t_hi = t;
            }
        for (const auto &[x, t] : blocks)
            if (x <= x_hi / 2 && x > x_lo) {
                x_lo = x;
                t_lo = t;
            }
    };
    double x_lo, t_lo, x_hi, t_hi;
    widest(pu.measured, x_lo, t_lo, x_hi, t_hi);
    if (x_lo <= 0)
        widest(pu.saved_blocks, x_lo, t_lo, x_hi, t_hi);
    // A time that fell by more than noise as the size grew is a one-off cost in the smaller
    // block (an OpenCL kernel's compilation in the first block), not evidence of a flat curve.
    if (x_lo <= 0 || t_lo <= 0 || t_hi < 0.8 * t_lo)
        return trust;
    const double elasticity = std::log(t_hi / t_lo) / std::log(x_hi / x_lo);
    return elasticity < 0.5 ? trust * trust : trust;
}

// Blocks of a PU's minimum size never count: they are the smallest thing it can be given;
// nor do a held PU's, which never exceed its measured efficient size.
double plbhac_trust_ratio(const PlbhacPuState &pu, uint64_t block, double trust)
{
    if (trust <= 0 || block <= pu.min_block || pu.size_hi <= 0 || pu.held > 0)
        return 0;
    return static_cast<double>(block) / (plbhac_trust_of(pu, trust) * pu.size_hi);
}

double plbhac_trust_excess(const PlbhacState &s)
{
    double over = 0;
    for (size_t i = 0; i < s.pus.size(); ++i)
        over = std::max(over, plbhac_trust_ratio(*s.pus[i], s.solution[i], s.options.trust));
    return over;
}

// Predicted time grows with the size (the fitted curves are clamped monotone outside the
// measured range), so bisect over granule multiples.
uint64_t plbhac_largest_block_within(const PlbhacPuState &pu, double seconds, const BlockRules &rules)
{
    uint64_t lo = 0, hi = rules.total / rules.granule;
    while (lo < hi) {
        uint64_t mid = (lo + hi + 1) / 2;
        if (plbhac_predict(pu, mid * rules.granule) <= seconds)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo * rules.granule;
}

}  // namespace hetpu
