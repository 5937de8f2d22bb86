// SPDX-License-Identifier: LGPL-2.1-or-later
// Fitting and subset selection on their own: known curves are recovered, the subset stays
// small when points are few, and the number of terms never outruns the distinct sizes.
#include "perfmodels/core/curve_select.h"
#include "perfmodels/core/observation_log.h"
#include "perfmodels/core/online_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

using namespace hetpu;

namespace {

using Curve = std::function<double(double)>;

// `n` sizes spread over [lo, hi] (in a shuffled, PLB-HAC-like order, not sorted) with
// their times, under multiplicative Gaussian noise of relative std `noise`.
std::vector<std::pair<double, double>> noisy_points(const Curve &t, double lo, double hi, int n, double noise,
                                                    unsigned seed)
{
    std::vector<std::pair<double, double>> points;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> pos(0.0, 1.0);
    std::normal_distribution<double> gauss(0.0, 1.0);
    for (int i = 0; i < n; ++i) {
        // Guarantee both ends are covered, the rest uniformly in between.
        const double x = std::round(i == 0 ? lo : i == 1 ? hi : lo + (hi - lo) * pos(rng));
        points.emplace_back(x, t(x) * (1.0 + noise * gauss(rng)));
    }
    return points;
}

// Feeds those points to a model, one by one as blocks complete.
OnlineTimeModel train(const Curve &t, double lo, double hi, int n, double noise, unsigned seed = 7)
{
    OnlineModelOptions opt;
    opt.half_life = 0;  // stationary PU: use every point equally
    OnlineTimeModel m(opt);
    for (const auto &[x, y] : noisy_points(t, lo, hi, n, noise, seed))
        EXPECT_NO_THROW(m.add(x, y));
    return m;
}

double max_rel_error(const OnlineTimeModel &m, const Curve &t, double lo, double hi)
{
    double worst = 0.0;
    for (int k = 0; k <= 50; ++k) {
        const double x = lo + (hi - lo) * k / 50.0;
        worst = std::max(worst, std::fabs(m.predict(x) - t(x)) / t(x));
    }
    return worst;
}

struct Case {
    const char *name;
    Curve t;
    double lo, hi;
};

std::vector<Case> cases()
{
    return {
        {"linear", [](double x) { return 2e-3 + 3e-6 * x; }, 1000, 65536},
        {"quadratic", [](double x) { return 1e-9 * x * x + 1e-5 * x; }, 1000, 65536},
        {"cubic (matmul)", [](double x) { return 1e-3 + 2e-10 * x * x * x; }, 256, 4096},
        {"x ln x (fft)", [](double x) { return 5e-8 * x * std::log(x); }, 1024, 1 << 20},
    };
}

}  // namespace

TEST(CurveSelect, RecoversKnownCurvesWithoutNoise)
{
    for (const Case &c : cases()) {
        OnlineTimeModel m = train(c.t, c.lo, c.hi, 8, 0.0);
        EXPECT_LT(max_rel_error(m, c.t, c.lo, c.hi), 1e-3) << c.name << ": " << m.describe();
        EXPECT_LE(m.curve().terms().size(), 2u) << c.name << ": smallest exact form expected, got " << m.describe();
    }
}

TEST(CurveSelect, RecoversKnownCurvesWithThreePercentNoise)
{
    for (const Case &c : cases()) {
        for (unsigned seed : {1u, 2u, 3u}) {
            OnlineTimeModel m = train(c.t, c.lo, c.hi, 24, 0.03, seed);
            // Worst error over the whole range, edges included, from 24 points with 3%
            // noise. 6%: the model re-chooses its basis every few points rather than on
            // every point (a quarter of the fitting time, which PLB-HAC pays each step),
            // so its last choice may rest on 22 points instead of 24.
            EXPECT_LT(max_rel_error(m, c.t, c.lo, c.hi), 0.06) << c.name << " seed " << seed << ": " << m.describe();
        }
    }
}

TEST(CurveSelect, NoiselessCubicIsDescribedByItsOwnTerms)
{
    OnlineTimeModel m = train([](double x) { return 4e-11 * x * x * x; }, 256, 4096, 6, 0.0);
    ASSERT_EQ(m.curve().terms().size(), 1u) << m.describe();
    EXPECT_EQ(m.curve().terms()[0], BasisFn::X3);
    // Coefficient is in seconds at the largest size: 4e-11 * 4096^3.
    EXPECT_NEAR(m.curve().coefficients()[0], 4e-11 * std::pow(4096.0, 3), 1e-6);
}

TEST(CurveSelect, FewPointsGiveSmallModels)
{
    OnlineTimeModel m;
    const Curve t = [](double x) { return 1e-3 + 2e-10 * x * x * x; };
    ASSERT_NO_THROW(m.add(1000, t(1000)));
    EXPECT_FALSE(m.ready()) << "one size is not a model yet";
    EXPECT_EQ(m.curve().terms(), std::vector<BasisFn>{BasisFn::X}) << "one size: proportional";
    EXPECT_NEAR(m.predict(1000), t(1000), 1e-12);

    ASSERT_NO_THROW(m.add(2000, t(2000)));
    EXPECT_TRUE(m.ready());
    EXPECT_EQ(m.curve().terms(), (std::vector<BasisFn>{BasisFn::Constant, BasisFn::X}))
        << "two sizes: the paper's initial linear fit";
    EXPECT_NEAR(m.predict(1500), 0.5 * (t(1000) + t(2000)), 1e-9);

    ASSERT_NO_THROW(m.add(3000, t(3000)));
    EXPECT_LE(m.curve().terms().size(), 2u) << "3 sizes: at most 2 terms, " << m.describe();

    // Repeating the same sizes does not license more terms: d distinct sizes allow d - 1.
    for (int i = 0; i < 10; ++i)
        ASSERT_NO_THROW(m.add(1000 + 1000 * (i % 3), t(1000 + 1000 * (i % 3))));
    EXPECT_LE(m.curve().terms().size(), 2u) << m.describe();
}

TEST(CurveSelect, FullBasisIsUsableWhenAllowed)
{
    // Direct use of the selector with a larger term budget still fits and stays accurate.
    FitData d;
    for (int i = 1; i <= 12; ++i) {
        const double u = i / 12.0;
        d.u.push_back(u);
        d.y.push_back(1.0 + u * std::exp(u) + 0.5 * std::log(u) + 3.0);
        d.prior.push_back(1.0);
    }
    SelectOptions opt;
    opt.max_terms = 7;
    const SubsetFit f = select_curve(d, opt);
    ASSERT_TRUE(f.ok);
    for (size_t i = 0; i < d.u.size(); ++i)
        EXPECT_NEAR(eval_terms(f.terms, f.coef, d.u[i]), d.y[i], 1e-6 * d.y[i]);
    EXPECT_LE(f.terms.size(), 3u) << "constant + u*exp(u) + ln(u) is exact";
}

TEST(CurveFit, BisquareIrlsRejectsTenfoldSpikes)
{
    // The robust fit itself (below the online model's hold-back rule): a few 10x spikes get
    // robust weight 0 and the coefficients stay within 1% of the truth.
    FitData d;
    std::mt19937 rng(4);
    std::normal_distribution<double> gauss(0.0, 0.02);
    for (int i = 0; i < 30; ++i) {
        const double u = 0.25 + 0.75 * ((i * 7) % 13) / 12.0;
        const bool spike = i == 10 || i == 17 || i == 29;
        d.u.push_back(u);
        d.y.push_back((spike ? 10.0 : 1.0) * (0.1 + 2.0 * u * u * u) * (1.0 + gauss(rng)));
        d.prior.push_back(std::exp2(-(29 - i) / 8.0));
    }
    const std::vector<BasisFn> terms = {BasisFn::Constant, BasisFn::X3};
    const SubsetFit robust = fit_subset(d, terms, FitOptions());
    FitOptions plain_opt;
    plain_opt.robust = false;
    const SubsetFit plain = fit_subset(d, terms, plain_opt);
    ASSERT_TRUE(robust.ok);
    EXPECT_NEAR(robust.coef[1], 2.0, 0.02);
    EXPECT_NEAR(robust.coef[0], 0.1, 0.01);
    EXPECT_EQ(robust.robust_weight[10], 0.0);
    EXPECT_EQ(robust.robust_weight[17], 0.0);
    EXPECT_EQ(robust.robust_weight[29], 0.0);
    EXPECT_GT(std::fabs(plain.coef[1] - 2.0), 0.2) << "without IRLS the spikes do move the fit";
}

// Measured on the CPU worker of a real matmul run (columns, seconds): with three sizes the
// selection once picked t = -c u ln u, which is 0 at the newest, largest block, so PLB-HAC
// gave that PU a block predicted to take 12 us. Every chosen curve must fit the points.
TEST(CurveSelect, FewPointsNeverGiveACurveThatMissesOne)
{
    OnlineTimeModel m;
    const double pts[][2] = {{16, 0.006773981}, {32, 0.008839704}, {128, 0.024178682}};
    for (const auto &p : pts)
        ASSERT_NO_THROW(m.add(p[0], p[1]));
    for (const auto &p : pts)
        EXPECT_NEAR(m.predict(p[0]), p[1], 0.5 * p[1]) << m.describe();
    EXPECT_NEAR(m.predict(128), 0.0242, 0.2 * 0.0242) << m.describe();
}

// The screen that ranks every subset stops after SelectOptions::screen_iterations solves
// (it only ranks candidates for the robust refit). Cut short, it must still lead to curves
// as accurate as a converged screen's on the known shapes, with noise.
TEST(CurveSelect, AShortScreenChoosesCurvesAsAccurateAsAConvergedOne)
{
    SelectOptions converged;
    converged.screen_iterations = converged.fit.max_iterations;
    SelectOptions one_solve;
    one_solve.screen_iterations = 0;  // below one: one solve, as 1
    for (const Case &c : cases()) {
        for (unsigned seed : {1u, 2u, 3u}) {
            ObservationLog log(0.0, 24);
            for (const auto &[x, y] : noisy_points(c.t, c.lo, c.hi, 24, 0.03, seed))
                log.add(x, y);
            const FitData data = log.fit_data(true);
            auto error = [&](const SubsetFit &f) {
                double worst = 0;
                for (int k = 0; k <= 50; ++k) {
                    const double x = c.lo + (c.hi - c.lo) * k / 50.0;
                    worst = std::max(worst, std::fabs(eval_terms(f.terms, f.coef, x / log.max_x()) - c.t(x)) / c.t(x));
                }
                return worst;
            };
            const double short_screen = error(select_curve(data, SelectOptions()));
            const double full_screen = error(select_curve(data, converged));
            EXPECT_LT(short_screen, 0.06) << c.name << " seed " << seed;
            EXPECT_LE(short_screen, full_screen + 0.02) << c.name << " seed " << seed;
            EXPECT_LT(error(select_curve(data, one_solve)), 0.06) << c.name << " seed " << seed;
        }
    }
}

// select_curve fits every subset through one SubsetFitter, which evaluates the basis once
// and reuses the GSL objects of each term count. Each fit must be what a fresh fit of that
// subset alone gives (fit_subset), to the bit, in any order, robust or plain, with spikes
// and forgetting weights: nothing of one subset's fit may leak into the next.
TEST(CurveFit, AFitterReusedForManySubsetsFitsEachAsAFreshFit)
{
    ObservationLog log(8.0, 24);
    unsigned seed = 5;
    for (const auto &[x, y] : noisy_points([](double x) { return 1e-3 + 2e-9 * x * x; }, 1000, 65536, 20, 0.05, seed))
        log.add(x, y);
    log.add(30000, 0.02);  // a spike
    const FitData data = log.fit_data(true);
    FitOptions plain;
    plain.robust = false;
    plain.max_iterations = 2;
    SubsetFitter fitter(data);
    size_t fitted = 0;
    for (int pass = 0; pass < 2; ++pass)
        for (unsigned mask = 255; mask >= 1; --mask) {
            std::vector<BasisFn> terms;
            for (unsigned b = 0; b < kAllBasisFns.size(); ++b)
                if (mask & (1u << b))
                    terms.push_back(kAllBasisFns[b]);
            if (terms.size() > 3)
                continue;
            const FitOptions &opt = (mask + pass) % 2 ? plain : FitOptions();
            const SubsetFit reused = fitter.fit(terms, opt);
            const SubsetFit fresh = fit_subset(data, terms, opt);
            ASSERT_EQ(reused.coef, fresh.coef) << "mask " << mask << " pass " << pass;
            ASSERT_EQ(reused.robust_weight, fresh.robust_weight) << "mask " << mask;
            ASSERT_EQ(reused.ok, fresh.ok) << "mask " << mask;
            if (std::isfinite(fresh.press))
                ASSERT_EQ(reused.press, fresh.press) << "mask " << mask;
            else
                ASSERT_FALSE(std::isfinite(reused.press)) << "mask " << mask;
            fitted += fresh.ok;
        }
    EXPECT_GT(fitted, 100u) << "most subsets are identifiable on 21 distinct sizes";
}
