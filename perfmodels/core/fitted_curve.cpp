// SPDX-License-Identifier: LGPL-2.1-or-later
#include "perfmodels/core/fitted_curve.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

namespace hetpu {

FittedCurve::FittedCurve(std::vector<BasisFn> terms, std::vector<double> coef, double scale, double x_lo, double x_hi,
                         double floor)
    : terms_(std::move(terms)), coef_(std::move(coef)), scale_(scale), x_lo_(x_lo), x_hi_(x_hi), floor_(floor)
{
    // The continuations start from the clamped end values, so value() is continuous.
    lo_value_ = std::max(raw(x_lo_), floor_);
    hi_value_ = std::max(raw(x_hi_), floor_);
    lo_slope_ = std::max(raw_slope(x_lo_), 0.0);
    const double elasticity = lo_value_ > 0.0 ? x_lo_ * lo_slope_ / lo_value_ : 0.0;
    if (elasticity >= 1.0)
        lo_power_ = elasticity;

    double hi_slope = raw_slope(x_hi_);
    // Average slope over the observed range; proportional growth if the range is one size
    // or the fitted curve does not rise across it.
    double average = x_hi_ > x_lo_ ? (hi_value_ - lo_value_) / (x_hi_ - x_lo_) : 0.0;
    if (average <= 0.0)
        average = hi_value_ / x_hi_;
    hi_slope_ = std::max(hi_slope, average);
    if (!(hi_slope_ > 0.0))  // also catches NaN
        hi_slope_ = hi_value_ > 0.0 ? hi_value_ / x_hi_ : 0.0;
}

double FittedCurve::raw(double x) const
{
    double s = 0.0;
    for (size_t j = 0; j < terms_.size(); ++j)
        s += coef_[j] * basis_value(terms_[j], x / scale_);
    return s;
}

double FittedCurve::raw_slope(double x) const
{
    double s = 0.0;
    for (size_t j = 0; j < terms_.size(); ++j)
        s += coef_[j] * basis_derivative(terms_[j], x / scale_);
    return s / scale_;
}

double FittedCurve::unclamped(double x) const
{
    if (x < x_lo_) {
        if (lo_power_ > 0.0)
            return x > 0.0 ? lo_value_ * std::pow(x / x_lo_, lo_power_) : 0.0;
        return lo_value_ - lo_slope_ * (x_lo_ - std::max(x, 0.0));
    }
    if (x > x_hi_)
        return hi_value_ + hi_slope_ * (x - x_hi_);
    return raw(x);
}

double FittedCurve::unclamped_slope(double x) const
{
    if (x < x_lo_) {
        if (x <= 0.0)
            return 0.0;
        if (lo_power_ > 0.0)
            return lo_power_ * lo_value_ / x * std::pow(x / x_lo_, lo_power_);
        return lo_slope_;
    }
    if (x > x_hi_)
        return hi_slope_;
    return raw_slope(x);
}

double FittedCurve::value(double x) const
{
    if (terms_.empty())
        return 0.0;
    if (std::isnan(x))
        return x;
    return std::max(unclamped(x), floor_);
}

double FittedCurve::derivative(double x) const
{
    if (terms_.empty())
        return 0.0;
    if (std::isnan(x))
        return x;
    if (unclamped(x) <= floor_)
        return 0.0;
    return unclamped_slope(x);
}

std::string FittedCurve::describe() const
{
    if (terms_.empty())
        return "no model (no measurements)";
    std::ostringstream os;
    os.precision(6);
    os << "t(x) = ";
    for (size_t j = 0; j < terms_.size(); ++j) {
        if (j > 0)
            os << (coef_[j] < 0 ? " - " : " + ");
        else if (coef_[j] < 0)
            os << "-";
        os << std::fabs(coef_[j]);
        if (terms_[j] != BasisFn::Constant)
            os << "*" << basis_name(terms_[j]);
    }
    os << ", u = x/" << scale_ << ", fitted on x in [" << x_lo_ << ", " << x_hi_ << "]";
    return os.str();
}

}  // namespace hetpu
