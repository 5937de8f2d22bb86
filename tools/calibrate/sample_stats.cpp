// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/calibrate/sample_stats.h"

#include <cmath>
#include <gsl/gsl_cdf.h>
#include <limits>

namespace hetpu::calibrate {

double SampleSeries::mean() const
{
    if (xs_.empty())
        return 0;
    double s = 0;
    for (double x : xs_)
        s += x;
    return s / static_cast<double>(xs_.size());
}

double SampleSeries::stddev() const
{
    if (xs_.size() < 2)
        return 0;
    const double m = mean();
    double ss = 0;
    for (double x : xs_)
        ss += (x - m) * (x - m);
    return std::sqrt(ss / static_cast<double>(xs_.size() - 1));
}

double SampleSeries::half_width(double confidence) const
{
    if (xs_.size() < 2)
        return std::numeric_limits<double>::infinity();
    const double n = static_cast<double>(xs_.size());
    const double t = gsl_cdf_tdist_Pinv(0.5 + confidence / 2.0, n - 1.0);
    return t * stddev() / std::sqrt(n);
}

double SampleSeries::relative_half_width(double confidence) const
{
    const double hw = half_width(confidence);
    if (hw == 0)
        return 0;
    const double m = std::fabs(mean());
    if (m == 0)
        return std::numeric_limits<double>::infinity();
    return hw / m;
}

bool SampleSeries::precise(const RepetitionRule &rule) const
{
    return relative_half_width(rule.confidence) <= rule.precision;
}

bool should_stop(const std::vector<const SampleSeries *> &series, const RepetitionRule &rule)
{
    std::size_t n = std::numeric_limits<std::size_t>::max();
    for (const SampleSeries *s : series)
        n = std::min(n, s->size());
    if (series.empty() || n >= rule.max_reps)
        return true;
    if (n < rule.min_reps)
        return false;
    for (const SampleSeries *s : series)
        if (!s->precise(rule))
            return false;
    return true;
}

}  // namespace hetpu::calibrate
