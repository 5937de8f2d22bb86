// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC's transfer-time model G_p(x) = a1*x + a2 (paper eq. 2): a1 ~ inverse bandwidth,
// a2 ~ latency. Fitted with the same forgetting and robust weighting as the execution model
// (a congested link is a timing spike too), but on absolute residuals, because transfer
// times are legitimately 0 (data already on the PU's memory node), where relative errors
// are undefined. Predictions are clamped at 0 (a negative fitted latency would otherwise
// predict negative times for small blocks); the line needs no other extrapolation guard.
// With a single distinct size it is proportional (a2 = 0).
// Errors: add() throws std::invalid_argument naming the bad value (the model is unchanged).
#pragma once

#include "perfmodels/core/curve_select.h"
#include "perfmodels/core/fitted_curve.h"
#include "perfmodels/core/observation_log.h"

#include <string>
#include <utility>
#include <vector>

namespace hetpu {

struct TransferModelOptions {
    double half_life = 4.0;
    size_t window = 64;
    FitOptions fit;
};

class LinearTransferModel {
public:
    explicit LinearTransferModel(const TransferModelOptions &opt = TransferModelOptions());

    // x finite and > 0 elements, seconds finite and >= 0; else throws std::invalid_argument
    // and the model is unchanged.
    void add(double x, double seconds);

    bool ready() const;  // at least two distinct sizes
    size_t size() const { return log_.size(); }
    // Fitted points, oldest first, and a model rebuilt from them (see OnlineTimeModel).
    std::vector<std::pair<double, double>> points() const { return log_.points(); }
    void restore(const std::vector<std::pair<double, double>> &points);

    double predict(double x) const;
    double derivative(double x) const;
    double slope() const { return a1_; }      // seconds per element
    double intercept() const { return a2_; }  // seconds
    std::string describe() const;

private:
    TransferModelOptions opt_;
    ObservationLog log_;
    double a1_ = 0.0, a2_ = 0.0;
    static void check(double x, double seconds);  // throws std::invalid_argument naming the bad value
    void refit();
};

}  // namespace hetpu
