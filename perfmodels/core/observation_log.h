// SPDX-License-Identifier: LGPL-2.1-or-later
// The measurements behind one PU's model: a bounded window of (size, seconds) points, newest
// last, with exponential forgetting by age.
//
// Forgetting: the point observed k measurements ago weighs 2^(-k / half_life). A PU that
// becomes slower (a competing process, thermal throttling) is then believed within a few
// blocks instead of after the whole history is outvoted; with the default half-life of 4
// observations, 4 new points carry more weight than an arbitrarily long old history
// (sum of the last 4 weights 3.13 > 2^-1 * 4/ln 2 = 2.89). A half-life <= 0 disables it.
// Age counts observations, not seconds: blocks arrive at the rate the PU works, so a slow
// PU would otherwise forget faster than a fast one.
//
// On top of age, drop_older() lets the owner forget everything before a detected change of
// regime.
//
// The window bounds the cost of a refit (every candidate subset is fitted on every point);
// points older than it weigh < 2^-16 at the default settings anyway.
#pragma once

#include "perfmodels/core/curve_fit.h"

#include <cstddef>
#include <deque>
#include <utility>
#include <vector>

namespace hetpu {

class ObservationLog {
public:
    ObservationLog(double half_life, size_t window);

    void add(double x, double seconds);  // the caller validated both
    // Forgets every point except the newest `keep` (a detected change of regime, see
    // online_model.h).
    void drop_older(size_t keep);
    size_t size() const { return points_.size(); }
    // The points, oldest first (what a persisted model stores; see plbhac_model_store.h).
    std::vector<std::pair<double, double>> points() const;
    bool empty() const { return points_.empty(); }
    double min_x() const;
    double max_x() const;
    double min_time() const;  // smallest positive time, 0 if none

    // The fitting problem: u = x / max_x(), y = seconds, prior = forgetting weights.
    FitData fit_data(bool relative) const;

private:
    struct Point {
        double x, seconds;
    };
    double half_life_;
    size_t window_;
    std::deque<Point> points_;
};

}  // namespace hetpu
