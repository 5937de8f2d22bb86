// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_unit_fit.h"

#include <algorithm>
#include <cmath>

namespace hetpu {

void PlbhacUnitFit::add(double count, double seconds)
{
    if (!(count > 0) || !std::isfinite(seconds) || seconds < 0)
        return;
    ++n_;
    sx_ += count;
    sy_ += seconds;
    sxx_ += count * count;
    sxy_ += count * seconds;
    min_x_ = n_ == 1 ? count : std::min(min_x_, count);
    if (n_ == 1 || count > max_x_) {
        max_x_ = count;
        y_at_max_ = seconds;
        at_max_ = 1;
    } else if (count == max_x_) {
        y_at_max_ += seconds;
        ++at_max_;
    }
    refit();
}

void PlbhacUnitFit::note_lead(double lead_s)
{
    if (std::isfinite(lead_s))
        lead_ = lead_ < 0 ? std::max(0.0, lead_s) : std::min(lead_, std::max(0.0, lead_s));
}

// One size: proportional through the largest blocks' mean, which errs towards slow (a fixed
// cost read as per-element cost prices larger blocks high, and the plan gives less).
void PlbhacUnitFit::refit()
{
    if (one_size()) {
        a_ = 0;
        b_ = y_at_max_ / at_max_ / max_x_;
        return;
    }
    const double n = static_cast<double>(n_);
    const double mx = sx_ / n, my = sy_ / n;
    const double vxx = sxx_ / n - mx * mx, vxy = sxy_ / n - mx * my;
    double b = vxx > 0 ? vxy / vxx : my / mx;
    double a = my - b * mx;
    if (!(b > 0) || a < 0) {
        a = std::max(0.0, std::min(a, my));
        b = std::max((my - a) / mx, 1e-15);
    }
    a_ = a;
    b_ = b;
}

}  // namespace hetpu
