// SPDX-License-Identifier: LGPL-2.1-or-later
#include "perfmodels/core/transfer_model.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace hetpu {

LinearTransferModel::LinearTransferModel(const TransferModelOptions &opt) : opt_(opt), log_(opt.half_life, opt.window)
{}

void LinearTransferModel::add(double x, double seconds)
{
    check(x, seconds);
    log_.add(x, seconds);
    refit();
}

void LinearTransferModel::check(double x, double seconds)
{
    if (!std::isfinite(x) || x <= 0.0) {
        std::ostringstream os;
        os << "transfer model: block size must be a positive finite number of elements, got " << x;
        throw std::invalid_argument(os.str());
    }
    if (!std::isfinite(seconds) || seconds < 0.0) {
        std::ostringstream os;
        os << "transfer model: transfer time must be finite and >= 0, got " << seconds << " s";
        throw std::invalid_argument(os.str());
    }
}

void LinearTransferModel::refit()
{
    const FitData data = log_.fit_data(false);
    const bool line = distinct_sizes(data.u) >= 2;
    const std::vector<BasisFn> terms =
        line ? std::vector<BasisFn>{BasisFn::X, BasisFn::Constant} : std::vector<BasisFn>{BasisFn::X};
    const SubsetFit fit = fit_subset(data, terms, opt_.fit);
    // Coefficients are per scaled size u = x / max_x: convert back to per-element units.
    a1_ = fit.coef[0] / log_.max_x();
    a2_ = line ? fit.coef[1] : 0.0;
}

void LinearTransferModel::restore(const std::vector<std::pair<double, double>> &points)
{
    // One fit at the end: the fit depends only on the points and their order, and a file's
    // 64 points refitted one by one cost ~9 ms of a process's first job.
    LinearTransferModel fresh(opt_);
    try {
        for (const auto &[x, seconds] : points) {
            check(x, seconds);
            fresh.log_.add(x, seconds);
        }
    } catch (const std::invalid_argument &) {
        *this = LinearTransferModel(opt_);
        throw;
    }
    if (!fresh.log_.empty())
        fresh.refit();
    *this = std::move(fresh);
}

bool LinearTransferModel::ready() const { return log_.size() >= 2 && distinct_sizes(log_.fit_data(false).u) >= 2; }

double LinearTransferModel::predict(double x) const
{
    if (std::isnan(x))
        return x;
    return std::max(a1_ * std::max(x, 0.0) + a2_, 0.0);
}

double LinearTransferModel::derivative(double x) const
{
    if (std::isnan(x))
        return x;
    return a1_ * std::max(x, 0.0) + a2_ > 0.0 && x > 0.0 ? a1_ : 0.0;
}

std::string LinearTransferModel::describe() const
{
    std::ostringstream os;
    os.precision(6);
    os << "G(x) = " << a1_ << "*x + " << a2_ << " (" << log_.size() << " points)";
    return os.str();
}

}  // namespace hetpu
