// SPDX-License-Identifier: LGPL-2.1-or-later
// What PLB-HAC's ladder knows of one unit: the blocks it ran, fitted as a fixed plus a
// per-element cost (least squares, kept increasing with a non-negative intercept), and its
// hand-out lead: how long after being handed out a block of an idle unit starts. Cheap
// enough to refit at every completion. Pure C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hetpu {

class PlbhacUnitFit {
public:
    // A finished block of `count` elements that took `seconds` once started.
    void add(double count, double seconds);
    // A block handed to the unit while idle started `lead_s` after (the smallest seen counts:
    // a longer one was a stall).
    void note_lead(double lead_s);

    bool measured() const { return n_ > 0; }
    double fixed_s() const { return a_; }
    double per_element_s() const { return b_; }
    double expected_s(double count) const { return a_ + b_ * count; }
    double lead_s() const { return lead_ < 0 ? 0 : lead_; }
    bool lead_known() const { return lead_ >= 0; }
    double largest() const { return max_x_; }
    // Every block so far of one size (within 1.5x): the fit is proportional through them.
    bool one_size() const { return max_x_ < 1.5 * min_x_; }
    size_t blocks() const { return n_; }

private:
    void refit();

    size_t n_ = 0;
    double sx_ = 0, sy_ = 0, sxx_ = 0, sxy_ = 0;
    double min_x_ = 0, max_x_ = 0, y_at_max_ = 0;
    unsigned at_max_ = 0;
    double a_ = 0, b_ = 0;
    double lead_ = -1;
};

}  // namespace hetpu
