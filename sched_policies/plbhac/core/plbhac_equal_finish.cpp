// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_equal_finish.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace hetpu {
namespace {

constexpr int kMaxOuter = 200;
constexpr int kMaxInner = 200;

// The largest x in [a, b] with T(x) <= t, given that x_p(t) lies in [a, b] (the brackets
// come from the outer search, so they hold for increasing curves). Newton on T(x) - t with
// the exact slope, falling back to bisection whenever a step leaves the bracket or does not
// halve it; the bracket end with T <= t is returned, so the answer never overshoots t.
double inverse(const TimeCurve &c, double t, double a, double b, double x_tol)
{
    TimeEval eb = c.eval(b);
    if (eb.value <= t)
        return b;
    TimeEval ea = c.eval(a);
    if (ea.value >= t)
        return a;
    double x = 0.5 * (a + b), width_before = b - a;
    for (int i = 0; i < kMaxInner && b - a > x_tol; ++i) {
        const TimeEval e = c.eval(x);
        const double f = e.value - t;
        if (f == 0)
            return x;
        if (f < 0)
            a = x;
        else
            b = x;
        double next = e.d1 > 0 ? x - f / e.d1 : a - 1;  // a - 1: no usable slope
        if (!(next > a && next < b) || 2 * (b - a) > width_before)
            next = 0.5 * (a + b);
        width_before = b - a;
        x = next;
    }
    return a;
}

void validate(const std::vector<const TimeCurve *> &curves, double W, const char *who)
{
    if (curves.empty())
        throw std::invalid_argument(std::string(who) + ": no PU");
    for (const TimeCurve *c : curves)
        if (c == nullptr)
            throw std::invalid_argument(std::string(who) + ": null time curve");
    if (!(W > 0) || !std::isfinite(W))
        throw std::invalid_argument(std::string(who) + ": workload must be finite and > 0");
}

}  // namespace

std::vector<bool> empty_at_optimum(const std::vector<const TimeCurve *> &curves, double W)
{
    validate(curves, W, "empty_at_optimum");
    const std::size_t k = curves.size();
    const double tiny = W * 1e-12, x_tol = W * 1e-13;
    std::vector<bool> empty(k, false);
    std::vector<std::pair<double, std::size_t>> starts(k);
    for (std::size_t p = 0; p < k; ++p) {
        starts[p] = {curves[p]->eval(tiny).value, p};
        if (!std::isfinite(starts[p].first))
            return empty;  // a curve the search cannot use (and could not sort): leave every PU to the solve
    }
    std::sort(starts.begin(), starts.end());
    // Whether the PUs that start before start_j finish W by then.
    auto finish_before = [&](std::size_t j) {
        const double t = starts[j].first;
        double sum = 0;
        for (std::size_t i = 0; i < j && starts[i].first < t; ++i) {
            sum += inverse(*curves[starts[i].second], t, tiny, W, x_tol);
            if (sum >= W)
                return true;
        }
        return false;
    };
    // The smallest j in [1, k) that finishes before start_j; k when none does. Usually
    // none does (every PU starts before the end): one pass over the PUs says so.
    if (k < 2 || !finish_before(k - 1))
        return empty;
    std::size_t lo = 1, hi = k - 1;
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (finish_before(mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    for (std::size_t j = lo; j < k; ++j)
        empty[starts[j].second] = true;
    return empty;
}

MakespanNlpResult solve_makespan_equal_finish(const std::vector<const TimeCurve *> &curves, double W)
{
    validate(curves, W, "solve_makespan_equal_finish");

    MakespanNlpResult res;
    res.ipopt_status = 0;
    res.ipopt_status_name = "Equal_Finish_Search";
    const std::size_t k = curves.size();
    if (k == 1) {
        res.shares.assign(1, W);
        res.makespan_s = curves[0]->eval(W).value;
        res.iterations = 0;
        res.converged = std::isfinite(res.makespan_s);
        return res;
    }

    // TimeCurve is only asked about 0 < x <= W: "empty" is the smallest positive size.
    const double tiny = W * 1e-12;
    const double x_tol = W * 1e-13;
    // No PU can finish before its empty-block time, and every constraint binds the makespan
    // (as in the NLP): t* >= t_floor.
    double t_floor = -std::numeric_limits<double>::infinity();
    double t_alone = std::numeric_limits<double>::infinity();  // the best PU taking all of W
    for (const TimeCurve *c : curves) {
        const double t0 = c->eval(tiny).value, tw = c->eval(W).value;
        if (!std::isfinite(t0) || !std::isfinite(tw))
            return res;  // converged = false: a curve the search cannot use
        t_floor = std::max(t_floor, t0);
        t_alone = std::min(t_alone, tw);
    }

    std::vector<double> x_lo(k, tiny), x_hi(k, W), x(k);
    auto shares_at = [&](double t, double &sum, double &slope_sum) {
        sum = 0;
        slope_sum = 0;  // d(sum x_p)/dt = sum over interior PUs of 1 / T_p'(x_p)
        for (std::size_t p = 0; p < k; ++p) {
            x[p] = inverse(*curves[p], t, x_lo[p], x_hi[p], x_tol);
            sum += x[p];
            if (x[p] > x_lo[p] && x[p] < x_hi[p]) {
                const double d1 = curves[p]->eval(x[p]).d1;
                if (d1 > 0)
                    slope_sum += 1 / d1;
            }
        }
    };

    double sum = 0, slope = 0;
    double t_lo = t_floor, t_hi = std::max(t_floor, t_alone);
    shares_at(t_lo, sum, slope);
    int iterations = 1;
    if (sum >= W) {
        t_hi = t_lo;  // a flat optimum: the slowest empty block already sets the makespan
    } else {
        x_lo = x;
        double t = t_lo, g = sum - W;
        std::vector<double> x_at_hi;
        bool hi_known = false;
        for (; iterations < kMaxOuter; ++iterations) {
            if (std::fabs(g) <= 1e-12 * W || t_hi - t_lo <= 1e-14 * std::max(1.0, std::fabs(t_hi)))
                break;
            double next = slope > 0 ? t - g / slope : t_hi + 1;
            if (!(next > t_lo && next < t_hi))
                next = 0.5 * (t_lo + t_hi);
            shares_at(next, sum, slope);
            t = next;
            g = sum - W;
            if (g >= 0) {
                t_hi = t;
                x_hi = x;
                x_at_hi = x;
                hi_known = true;
            } else {
                t_lo = t;
                x_lo = x;
            }
        }
        // Converged on the sum (either side of W by a rounding error): the latest shares.
        // Converged on the bracket instead: the feasible side's.
        if (std::fabs(g) > 1e-12 * W) {
            if (!hi_known) {
                shares_at(t_hi, sum, slope);
                x_at_hi = x;
            }
            x = x_at_hi;
        }
    }
    res.iterations = iterations;
    res.converged = iterations < kMaxOuter;

    // Scaled to W exactly: by a rounding error, or down from the feasible side (with
    // increasing curves no PU then ends after t_hi).
    sum = 0;
    for (double v : x)
        sum += v;
    res.shares.resize(k);
    res.makespan_s = 0;
    for (std::size_t p = 0; p < k; ++p) {
        res.shares[p] = x[p] * (W / sum);
        res.makespan_s = std::max(res.makespan_s, curves[p]->eval(std::max(res.shares[p], tiny)).value);
    }
    return res;
}

}  // namespace hetpu
