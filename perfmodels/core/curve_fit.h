// SPDX-License-Identifier: LGPL-2.1-or-later
// Robust, weighted least-squares fit of y ~ sum_j c_j f_j(u) for one fixed set of basis
// functions, with the leave-one-out (PRESS) error that curve_select.h uses to compare sets.
//
// Why each weight exists:
//  - prior[i] (from observation_log.h) is the exponential-forgetting weight of point i, so
//    recent measurements can outvote old ones when a PU slows down.
//  - relative mode divides each residual by the fitted time (quasi-likelihood IRLS for
//    multiplicative noise): timing noise is a percentage of the time, and the scheduler
//    equalises finish times, so a 10% error on a small block matters as much as a 10% error
//    on a big one. Plain least squares would sacrifice small blocks to large ones.
//  - robust weights (Tukey bisquare, c = 4.685, scale = 1.4826 * prior-weighted median of
//    |residual|) make a timing spike (a known StarPU failure: one spike corrupts a history
//    model) count for nothing instead of dragging the curve. The median is weighted by the
//    forgetting weights so that once the recent regime holds most of the weight, the *old*
//    points become the outliers: forgetting and robustness cooperate instead of fighting.
// The linear algebra is GSL's (gsl_multifit_wlinear: SVD with column balancing, tolerant of
// rank deficiency); this file only chooses weights.
#pragma once

#include "perfmodels/core/curve_basis.h"

#include <memory>
#include <vector>

namespace hetpu {

struct FitData {
    std::vector<double> u;      // scaled sizes, > 0
    std::vector<double> y;      // measured times (> 0 in relative mode, >= 0 otherwise)
    std::vector<double> prior;  // forgetting weights in (0, 1]
    bool relative = true;       // residuals relative to the fitted value (see above)
};

struct FitOptions {
    bool robust = true;
    double tuning = 4.685;  // bisquare constant: 95% efficiency under Gaussian noise
    int max_iterations = 40;
    // Lower bound of the residual scale: relative (0.5%) in relative mode, a fraction of the
    // mean |y| otherwise. Without it a noiseless fit has scale 0 and every rounding error
    // would look like an outlier.
    double scale_floor = 5e-3;
    // Robust reweighting needs redundancy: with fewer than terms + min_redundancy points an
    // exact or nearly exact fit leaves no evidence of which point is wrong, so the fit
    // stays plain (weighted) least squares.
    int min_redundancy = 3;
    // Leave-one-out errors are capped at this when scoring (see curve_fit.cpp): in relative
    // mode a log ratio (ln 1.5: a point predicted 50% off is simply wrong, however wrong),
    // otherwise a multiple of the mean |y|.
    double press_cap = 0.405465;
};

struct SubsetFit {
    std::vector<BasisFn> terms;
    std::vector<double> coef;           // one per term
    std::vector<double> robust_weight;  // per point, in [0, 1]
    // Prior-weighted mean of capped squared leave-one-out errors over all points (log
    // ratios in relative mode);
    // +infinity when some kept point cannot be left out without losing identifiability.
    double press = 0.0;
    // False when the kept points (robust weight > 0) have fewer distinct sizes than terms:
    // the coefficients would not be determined by the data.
    bool ok = false;
};

// Fits `terms` to `data`. Requires data.u/y/prior of equal, non-zero length and valid
// values (the callers validate at insertion); terms non-empty.
SubsetFit fit_subset(const FitData &data, const std::vector<BasisFn> &terms, const FitOptions &opt);

// fit_subset for many subsets of one data set (select_curve fits ~100): the basis functions
// are evaluated at the data's sizes once, and the GSL objects of each term count are
// allocated once, not per fit. The same numbers as fit_subset. `data` must outlive it.
class SubsetFitter {
public:
    explicit SubsetFitter(const FitData &data);
    ~SubsetFitter();
    SubsetFitter(const SubsetFitter &) = delete;
    SubsetFitter &operator=(const SubsetFitter &) = delete;

    SubsetFit fit(const std::vector<BasisFn> &terms, const FitOptions &opt);

    struct Scratch;  // the GSL objects of one term count (curve_fit.cpp)

private:
    const FitData &data_;
    std::vector<std::vector<double>> basis_;         // basis_[f][i]: basis function f at data.u[i]
    std::vector<std::unique_ptr<Scratch>> scratch_;  // by term count
    double mean_abs_y_ = 0.0;
};

// sum_j coef[j] * f_j(u)
double eval_terms(const std::vector<BasisFn> &terms, const std::vector<double> &coef, double u);

}  // namespace hetpu
