// SPDX-License-Identifier: LGPL-2.1-or-later
#include "perfmodels/core/observation_log.h"

#include <algorithm>
#include <cmath>

namespace hetpu {

ObservationLog::ObservationLog(double half_life, size_t window)
    : half_life_(half_life), window_(std::max<size_t>(window, 2))
{}

void ObservationLog::add(double x, double seconds)
{
    points_.push_back({x, seconds});
    while (points_.size() > window_)
        points_.pop_front();
}

void ObservationLog::drop_older(size_t keep)
{
    while (points_.size() > keep)
        points_.pop_front();
}

std::vector<std::pair<double, double>> ObservationLog::points() const
{
    std::vector<std::pair<double, double>> out;
    for (const Point &p : points_)
        out.emplace_back(p.x, p.seconds);
    return out;
}

double ObservationLog::min_x() const
{
    double m = points_.empty() ? 0.0 : points_.front().x;
    for (const Point &p : points_)
        m = std::min(m, p.x);
    return m;
}

double ObservationLog::max_x() const
{
    double m = 0.0;
    for (const Point &p : points_)
        m = std::max(m, p.x);
    return m;
}

double ObservationLog::min_time() const
{
    double m = 0.0;
    for (const Point &p : points_)
        if (p.seconds > 0.0 && (m == 0.0 || p.seconds < m))
            m = p.seconds;
    return m;
}

FitData ObservationLog::fit_data(bool relative) const
{
    FitData d;
    d.relative = relative;
    const double s = max_x();
    const size_t n = points_.size();
    for (size_t i = 0; i < n; ++i) {
        const double age = static_cast<double>(n - 1 - i);
        d.u.push_back(points_[i].x / s);
        d.y.push_back(points_[i].seconds);
        d.prior.push_back((half_life_ > 0.0 ? std::exp2(-age / half_life_) : 1.0));
    }
    return d;
}

}  // namespace hetpu
