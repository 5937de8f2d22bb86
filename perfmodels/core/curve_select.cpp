// SPDX-License-Identifier: LGPL-2.1-or-later
#include "perfmodels/core/curve_select.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace hetpu {

size_t distinct_sizes(const std::vector<double> &u) { return std::set<double>(u.begin(), u.end()).size(); }

// A curve that misses a point it kept (robust weight >= 0.5) by more than half is not a
// model of that data. Leave-one-out scores cap each miss (so a spike cannot dominate),
// which with three or four points lets a one-term curve through two points "win" while
// predicting ~0 at the third, the newest one (seen on a real run: t = -c u ln u, zero at
// the largest block). Times are only checked in relative mode; transfer times may be 0.
bool curve_fits_points(const SubsetFit &f, const FitData &data) { return curve_misses(f, data) == 0; }

size_t curve_misses(const SubsetFit &f, const FitData &data)
{
    if (!data.relative)
        return 0;
    size_t misses = 0;
    for (size_t i = 0; i < data.u.size(); ++i) {
        if (f.robust_weight.size() == data.u.size() && f.robust_weight[i] < 0.5)
            continue;
        const double predicted = eval_terms(f.terms, f.coef, data.u[i]);
        if (!(predicted > 0) || std::fabs(data.y[i] - predicted) > 0.5 * data.y[i])
            ++misses;
    }
    return misses;
}

// Processing time never falls as a block grows, so a curve that does so between the sizes
// it was fitted on is an artefact of the basis (an e^x or x^3 term bulging in a gap between
// measured sizes), however well it scores at the points themselves. Seen in simulation:
// points at 128, 704, 1024 and 13504 elements, a 3-term fit predicting 19.9 s at 10560 and
// 13.3 s at 13504; the next, normal block then looked like a surprise, then a second one
// like a new regime, and the model restarted from two nearly equal sizes. Checked on a
// log-spaced grid over the measured range, allowing a 2% dip for noise.
bool curve_rises_over_range(const SubsetFit &f, const FitData &data)
{
    if (data.u.empty())
        return true;
    const auto [lo_it, hi_it] = std::minmax_element(data.u.begin(), data.u.end());
    const double lo = *lo_it, hi = *hi_it;
    if (!(lo > 0) || !(hi > lo))
        return true;
    constexpr int kGrid = 48;
    const double ratio = std::pow(hi / lo, 1.0 / kGrid);
    double peak = eval_terms(f.terms, f.coef, lo);
    for (int i = 1; i <= kGrid; ++i) {
        const double v = eval_terms(f.terms, f.coef, i == kGrid ? hi : lo * std::pow(ratio, i));
        if (v < peak - 0.02 * std::fabs(peak))
            return false;
        peak = std::max(peak, v);
    }
    return true;
}

SubsetFit select_curve(const FitData &data, const SelectOptions &opt)
{
    const size_t d = distinct_sizes(data.u);
    const std::vector<BasisFn> linear =
        d >= 2 ? std::vector<BasisFn>{BasisFn::Constant, BasisFn::X} : std::vector<BasisFn>{BasisFn::X};
    if (d <= 2)
        return fit_subset(data, linear, opt.fit);
    // Sizes within 1.5x of each other cannot tell one shape from another: whatever fits
    // them best is noise outside them (seen: a constant, 0.027 s at any size, chosen for a
    // CPU worker's k-means blocks of 389k-403k elements; extrapolated, that is free work).
    // Time in proportion to the work is the one shape such data supports.
    const auto [lo_u, hi_u] = std::minmax_element(data.u.begin(), data.u.end());
    if (*hi_u < kMinShapeSpread * *lo_u)
        return fit_subset(data, {BasisFn::X}, opt.fit);

    // Kish effective sample size: forgetting makes old points count less, so a long history
    // with a short half-life carries the information of about 2.9 half-lives of points.
    double sum_w = 0.0, sum_w2 = 0.0;
    for (double w : data.prior) {
        sum_w += w;
        sum_w2 += w * w;
    }
    const double n_eff = sum_w * sum_w / sum_w2;
    const size_t kmax = std::min(static_cast<size_t>(std::max(opt.max_terms, 1)), d - 1);
    // PRESS below this counts as "exact": 1e-6 relative error, far below timer resolution.
    double mean_sq = 0.0;
    if (!data.relative) {
        for (double v : data.y)
            mean_sq += v * v;
        mean_sq /= static_cast<double>(data.y.size());
    }
    const double press_floor = data.relative ? 1e-12 : 1e-12 * mean_sq + 1e-300;

    struct Scored {
        SubsetFit fit;
        double score;
    };
    auto score_of = [&](const SubsetFit &f) {
        const double k = static_cast<double>(f.terms.size());
        // ln PRESS plus AICc's small-sample term: PRESS already charges the 2k/n of AIC,
        // but with a handful of points, picking the best of ~90 subsets by PRESS alone
        // overfits (a 3-term curve through 5 noisy points always finds a lucky fit).
        return std::log(std::max(f.press, press_floor)) + 2.0 * k * (k + 1.0) / (n_eff * (n_eff - k - 1.0));
    };
    // Screening: every admissible subset by one plain weighted least-squares fit (cheap),
    // then the robust fit (iterated reweighting, the expensive part) only for the best few.
    // A spike raises every candidate's plain PRESS alike, so the right subset survives the
    // screen; the robust refit then decides. Selecting is what PLB-HAC pays per refit.
    // The screen stops early (opt.screen_iterations, one reweighting by default): it only
    // ranks subsets for the robust refit, which converges from scratch. Converged screening
    // fits (~8 solves each, 92 subsets) are most of a choice's cost, and a choice is most
    // of plb-hac's planning time on a node of many PUs with millisecond blocks, paid in
    // their completion callbacks (bench/curve_select_speed: time and choices against a
    // converged screen; bench/README.md, "Planner cost").
    FitOptions plain = opt.fit;
    plain.robust = false;
    plain.max_iterations = std::clamp(opt.screen_iterations, 1, std::max(plain.max_iterations, 1));
    SubsetFitter fitter(data);
    std::vector<Scored> screened;
    const unsigned nfn = static_cast<unsigned>(kAllBasisFns.size());
    for (unsigned mask = 1; mask < (1u << nfn); ++mask) {
        std::vector<BasisFn> terms;
        for (unsigned b = 0; b < nfn; ++b)
            if (mask & (1u << b))
                terms.push_back(kAllBasisFns[b]);
        const double k = static_cast<double>(terms.size());
        if (terms.size() > kmax || n_eff <= k + 1.0)
            continue;
        SubsetFit f = fitter.fit(terms, plain);
        if (f.ok && std::isfinite(f.press))
            screened.push_back({std::move(f), 0.0});
    }
    for (Scored &s : screened)
        s.score = score_of(s.fit);
    const size_t keep = std::min<size_t>(screened.size(), 8);
    std::partial_sort(screened.begin(), screened.begin() + static_cast<std::ptrdiff_t>(keep), screened.end(),
                      [](const Scored &a, const Scored &b) { return a.score < b.score; });
    std::vector<Scored> fits;
    for (size_t i = 0; i < keep; ++i) {
        SubsetFit f = opt.fit.robust ? fitter.fit(screened[i].fit.terms, opt.fit) : screened[i].fit;
        if (f.ok && std::isfinite(f.press) && curve_fits_points(f, data) && curve_rises_over_range(f, data)) {
            const double score = score_of(f);
            fits.push_back({std::move(f), score});
        }
    }
    if (fits.empty())
        return fitter.fit(linear, opt.fit);

    double best = fits.front().score;
    for (const Scored &f : fits)
        best = std::min(best, f.score);
    const double limit = best + std::log1p(opt.parsimony);
    const Scored *chosen = nullptr;
    for (const Scored &f : fits) {
        if (f.score > limit)
            continue;
        if (!chosen || f.fit.terms.size() < chosen->fit.terms.size() ||
            (f.fit.terms.size() == chosen->fit.terms.size() && f.score < chosen->score))
            chosen = &f;
    }
    return chosen->fit;
}

}  // namespace hetpu
