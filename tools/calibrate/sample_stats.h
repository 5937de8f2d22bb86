// SPDX-License-Identifier: LGPL-2.1-or-later
// When to stop repeating a measurement: the HEPOPTA paper's methodology (its Algorithms 5-6,
// MeanUsingTtest / CalAccuracy): repeat until the sample mean lies within a Student-t
// confidence interval whose half-width is at most `precision` of the mean, with at least
// `min_reps` and at most `max_reps` repetitions. Pure C++ (GSL's t quantile).
#pragma once

#include <cstddef>
#include <vector>

namespace hetpu::calibrate {

struct RepetitionRule {
    double confidence = 0.95;  // two-sided level of the interval
    double precision = 0.10;   // accepted half-width / mean
    unsigned min_reps = 3;
    unsigned max_reps = 30;
};

class SampleSeries {
public:
    void add(double x) { xs_.push_back(x); }
    std::size_t size() const { return xs_.size(); }
    double mean() const;
    double stddev() const;  // sample standard deviation (n - 1); 0 for fewer than 2 samples
    // Half-width of the two-sided `confidence` Student-t interval of the mean,
    // t_{(1+c)/2, n-1} * s / sqrt(n); +infinity for fewer than 2 samples.
    double half_width(double confidence) const;
    // half_width / |mean|: 0 when every sample is equal (including all zero), +infinity
    // when the mean is 0 but the samples differ.
    double relative_half_width(double confidence) const;
    bool precise(const RepetitionRule &rule) const;  // relative_half_width <= precision

private:
    std::vector<double> xs_;
};

// Stop when every series is precise and min_reps were made, or when max_reps were made.
// (The paper tests the one-sided quantile gsl_cdf_tdist_Pinv(cl, n-1); a two-sided 95%
// interval needs the 0.975 quantile, which is what this uses: slightly stricter.)
bool should_stop(const std::vector<const SampleSeries *> &series, const RepetitionRule &rule);

}  // namespace hetpu::calibrate
