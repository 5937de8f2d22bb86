// SPDX-License-Identifier: LGPL-2.1-or-later
// Choosing which basis functions F_p uses. The paper fits the whole set by least squares;
// with the handful of points PLB-HAC has after training (2, then one more per block) that is
// ill-posed (7 unknowns, 2 equations), and with more points a full fit of 8 strongly
// collinear columns on (0, 1] overfits noise. So each candidate subset is fitted
// (curve_fit.h) and scored by its leave-one-out error (PRESS), which measures exactly what
// the scheduler needs: how well the curve predicts a block it has not seen.
//
// Rules (the paper leaves them open):
//  - 1 distinct size: t = a*u (proportional; enough for the training-phase ratio R).
//  - 2 distinct sizes: t = a + b*u, the paper's "curve is initially fitted using two points".
//  - Sizes all within kMinShapeSpread (1.5x) of each other: t = a*u, whatever their
//    number (no shape is identifiable there).
//  - d >= 3 distinct sizes: all subsets of k <= min(max_terms, d - 1) functions with
//    k < n_eff - 1 (n_eff: effective number of points under forgetting). Keeping one
//    distinct size spare guarantees that leaving a size out never leaves an exactly
//    determined (unscored) fit, so the number of parameters never outruns the data.
//  - Score: ln(PRESS) + 2k(k+1) / (n_eff (n_eff - k - 1)), i.e. leave-one-out error with
//    AICc's small-sample correction. PRESS alone already charges AIC's 2k/n, but choosing the
//    best of ~90 subsets from 5 noisy points by PRESS alone reliably finds a lucky 3-term fit.
//  - Parsimony: among subsets scoring within ln(1 + parsimony) of the best, the one with the
//    fewest terms wins (ties: best score). PRESS values below a numerical floor count as
//    equal, so a noiseless curve is described by its true, smallest form.
#pragma once

#include "perfmodels/core/curve_fit.h"

namespace hetpu {

// Below this ratio of the largest to the smallest size, data cannot tell one curve shape from
// another (select_curve fits them in proportion; OnlineTimeModel does not choose again among them).
constexpr double kMinShapeSpread = 1.5;

struct SelectOptions {
    int max_terms = 3;
    double parsimony = 0.05;
    // Weighted least-squares solves per candidate in the screen that ranks every subset
    // before the best few are fitted robustly (see select_curve); at most fit.max_iterations.
    // 1: relative errors against the measured times; 2: reweighted once against the first
    // fit; more: converged (~8 solves). bench/curve_select_speed compares them.
    int screen_iterations = 2;
    FitOptions fit;
};

// Best subset for data (non-empty). Never fails: if no candidate is identifiable (e.g. all
// but one size were rejected as outliers) the linear fallback of the rules above is used.
SubsetFit select_curve(const FitData &data, const SelectOptions &opt);

// False when the fit misses a point it kept (robust weight >= 0.5) by more than half (in
// relative mode; always true otherwise): such a curve is not a model of the data.
bool curve_fits_points(const SubsetFit &f, const FitData &data);
// How many kept points the fit misses by more than half (0 when it fits them all).
size_t curve_misses(const SubsetFit &f, const FitData &data);

// False when the curve falls, by more than 2% of its highest value so far, anywhere between
// the smallest and largest fitted sizes: processing time does not shrink as blocks grow.
bool curve_rises_over_range(const SubsetFit &f, const FitData &data);

// Number of distinct values in u.
size_t distinct_sizes(const std::vector<double> &u);

}  // namespace hetpu
