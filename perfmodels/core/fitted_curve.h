// SPDX-License-Identifier: LGPL-2.1-or-later
// A fitted model t(x) = sum_j c_j f_j(x / s), made safe to evaluate anywhere x >= 0.
//
// Scaling: s is the largest size in the fitting window, so the observed sizes map to
// u = x / s in (0, 1]: e^u stays in [1, e], every column of the design matrix is O(1), and
// the coefficients are "seconds at the largest observed block" (a coefficient of u^3 equal
// to 2 means 2 s at x = s). The paper's x is already normalised to [0, 1] (fraction of the
// data set); ours is the same idea with the normalising size known online.
//
// Prediction (the solver probes any x in [0, total]):
//  - inside [x_lo, x_hi] (smallest/largest observed size) it is the fitted curve:
//    interpolation, what least squares supports;
//  - above x_hi the curve continues as a straight line with the fitted end slope. Polynomials
//    and exponentials explode outside their data (e^u, u^3 fitted on (0, 1] can be wildly off
//    at u = 4) and can bend down; a line is the least committal continuation and keeps the
//    model convex-compatible for the solver. The slope is never below the curve's average
//    slope over the observed range (and never <= 0): time must keep growing with work, or the
//    solver would dump all remaining data on this PU;
//  - below x_lo, with elasticity a = x_lo t'(x_lo) / t(x_lo): if a >= 1 (convex, e.g. a
//    cubic) it continues as the power law t(x_lo) (x / x_lo)^a, which matches value and slope
//    at x_lo and reaches 0 at x = 0 (a tangent line would cross zero); if a < 1 (a fixed
//    overhead dominates) it continues as the tangent line, slope clamped at >= 0, which stays
//    above 0 because a < 1 (the overhead is kept, not invented);
//  - everywhere the value is at least `floor` (a fraction of the smallest observed time for
//    execution models, 0 for transfer models); where this clamp is active the derivative is 0.
// value() and derivative() are consistent (derivative is the exact derivative of value()
// wherever value() is differentiable), as Ipopt requires.
#pragma once

#include "perfmodels/core/curve_basis.h"

#include <string>
#include <vector>

namespace hetpu {

class FittedCurve {
public:
    FittedCurve() = default;
    FittedCurve(std::vector<BasisFn> terms, std::vector<double> coef, double scale, double x_lo, double x_hi,
                double floor);

    bool empty() const { return terms_.empty(); }
    double value(double x) const;       // seconds; x <= 0 is treated as 0
    double derivative(double x) const;  // d value / dx, seconds per element
    const std::vector<BasisFn> &terms() const { return terms_; }
    const std::vector<double> &coefficients() const { return coef_; }
    double scale() const { return scale_; }
    std::string describe() const;  // e.g. "t(x) = 0.0012 + 2.5*u^3, u = x/65536"

private:
    double raw(double x) const;        // fitted curve, no clamps (x > 0)
    double raw_slope(double x) const;  // its derivative in x
    double unclamped(double x) const;
    double unclamped_slope(double x) const;

    std::vector<BasisFn> terms_;
    std::vector<double> coef_;
    double scale_ = 1.0;
    double x_lo_ = 0.0, x_hi_ = 0.0;
    double floor_ = 0.0;
    double lo_value_ = 0.0, lo_slope_ = 0.0;  // continuation below x_lo
    double lo_power_ = 0.0;                   // > 0: power law of this exponent, else linear
    double hi_value_ = 0.0, hi_slope_ = 0.0;  // linear continuation above x_hi
};

}  // namespace hetpu
