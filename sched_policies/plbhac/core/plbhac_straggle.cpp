// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_straggle.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include <gsl/gsl_statistics_double.h>

namespace hetpu {

double plbhac_miss_spread(const std::vector<double> &log_misses)
{
    std::vector<double> v;
    for (double m : log_misses)
        if (std::isfinite(m))
            v.push_back(m);
    if (v.size() < 2)
        return 0.0;
    // Too few for a median's deviation: the largest miss either way, about one standard
    // deviation for 2 to 4 normal samples (and never smaller than the one the kind showed).
    if (v.size() < kPlbhacMinMisses) {
        double largest = 0;
        for (double m : v)
            largest = std::max(largest, std::abs(m));
        return largest;
    }
    std::sort(v.begin(), v.end());
    const double median = gsl_stats_median_from_sorted_data(v.data(), 1, v.size());
    for (double &m : v)
        m = std::abs(m - median);
    std::sort(v.begin(), v.end());
    constexpr double kNormalMad = 1.482602218505602;  // 1 / Phi^-1(3/4)
    return kNormalMad * gsl_stats_median_from_sorted_data(v.data(), 1, v.size());
}

PlbhacStraggleDraws::PlbhacStraggleDraws(const std::vector<double> &spreads, unsigned draws, std::uint64_t seed)
    : pus_(spreads.size()), spreads_(spreads.size(), 0.0)
{
    // Box-Muller on the generator's raw bits rather than std::normal_distribution, whose
    // algorithm the standard leaves to the library: the same seed gives the same draws
    // with any standard library.
    std::mt19937_64 rng(seed);
    const auto uniform = [&rng] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; };
    z_.reserve(static_cast<std::size_t>(draws) * pus_);
    for (std::size_t k = 0; k < static_cast<std::size_t>(draws) * pus_; ++k)
        z_.push_back(std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * M_PI * uniform()));
    miss_.assign(z_.size(), 1.0);
    set_spreads(spreads);
}

void PlbhacStraggleDraws::set_spreads(const std::vector<double> &spreads)
{
    if (spreads.size() != pus_)
        throw std::invalid_argument("PlbhacStraggleDraws::set_spreads: " + std::to_string(spreads.size()) +
                                    " spreads for " + std::to_string(pus_) + " PUs");
    for (std::size_t i = 0; i < pus_; ++i)
        spreads_[i] = std::isfinite(spreads[i]) && spreads[i] > 0 ? spreads[i] : 0.0;
    for (std::size_t k = 0; k < z_.size(); ++k) {
        const double s = spreads_[k % pus_];
        miss_[k] = s > 0 ? std::exp(s * z_[k] - 0.5 * s * s) : 1.0;
    }
}

double PlbhacStraggleDraws::expected_end(const std::vector<double> &ready_s,
                                         const std::vector<double> &duration_s) const
{
    if (ready_s.size() != pus_ || duration_s.size() != pus_)
        throw std::invalid_argument("PlbhacStraggleDraws::expected_end: " + std::to_string(ready_s.size()) +
                                    " ready times and " + std::to_string(duration_s.size()) + " durations for " +
                                    std::to_string(pus_) + " PUs");
    const std::size_t draws = pus_ ? miss_.size() / pus_ : 0;
    bool any = false;
    for (double d : duration_s)
        any |= d > 0;
    if (!any || draws == 0)
        return 0.0;
    double sum = 0;
    for (std::size_t d = 0; d < draws; ++d) {
        const double *miss = &miss_[d * pus_];
        double latest = 0;
        for (std::size_t i = 0; i < pus_; ++i)
            if (duration_s[i] > 0)
                latest = std::max(latest, ready_s[i] + duration_s[i] * miss[i]);
        sum += latest;
    }
    return sum / static_cast<double>(draws);
}

}  // namespace hetpu
