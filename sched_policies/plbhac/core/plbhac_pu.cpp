// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_pu.h"

#include <algorithm>
#include <cmath>

namespace hetpu {

namespace {

constexpr double kMinSpread = 1.5;  // measured sizes closer than this say nothing of a slope

}  // namespace

void PlbhacPuState::note_fit_range()
{
    fit_lo = fit_hi = 0;
    for (const auto &pt : exec.points()) {
        fit_lo = fit_lo > 0 ? std::min(fit_lo, pt.first) : pt.first;
        fit_hi = std::max(fit_hi, pt.first);
    }
}

void PlbhacPuState::note_miss(double m)
{
    constexpr size_t kWindow = 32;
    misses.push_back(m);
    if (misses.size() > kWindow)
        misses.erase(misses.begin(), misses.end() - kWindow);
}

bool plbhac_too_close(double a, double b) { return std::max(a, b) < kMinSpread * std::min(a, b); }

// The training gives a PU the sizes x_init and 2 x_init R, nearly the same for R near 1/2
// (a CPU next to a GPU), and its waiting blocks repeat them; a job that repeats itself
// (k-means' passes, warm-started steps) fills the model's window with blocks of nearly one
// size. A line through points that close has a slope made of timing noise, near 0 or
// negative, and the solve would then give the PU most of a step as if it were free. So
// until the sizes spread by kMinSpread the time is proportional through the model at its
// largest size (inside the fitted range, where the fit is sound): for a PU with a fixed
// latency that overestimates large blocks, the safe side.
bool plbhac_narrow(const PlbhacPuState &pu)
{
    return (pu.size_lo > 0 && plbhac_too_close(pu.size_lo, pu.size_hi)) ||
           (pu.fit_lo > 0 && plbhac_too_close(pu.fit_lo, pu.fit_hi));
}

double plbhac_anchor(const PlbhacPuState &pu) { return pu.fit_hi > 0 ? pu.fit_hi : pu.size_hi; }

double plbhac_model_time(const PlbhacPuState &pu, double x)
{
    return pu.surprise_scale * pu.exec.predict(x) + pu.transfer.predict(x);
}

double plbhac_predict(const PlbhacPuState &pu, uint64_t x)
{
    const double dx = static_cast<double>(x);
    const double latency = x > 0 ? pu.latency_s : 0.0;
    if (plbhac_narrow(pu))
        return plbhac_model_time(pu, plbhac_anchor(pu)) * dx / plbhac_anchor(pu) + latency;
    return plbhac_model_time(pu, dx) + latency;
}

// Blocks of a PU run back to back in assignment order, so the first outstanding one started
// at the PU's latest completion. The current model prices them, not the prediction made
// when they were assigned: that one may come from a model corrected since.
double plbhac_ready_in(const PlbhacPuState &pu, double now_s)
{
    double ready = pu.last_end_s;
    for (const PlbhacBlock &o : pu.outstanding)
        ready += plbhac_predict(pu, o.size);
    return std::max(0.0, ready - now_s);
}

double plbhac_best_rate(const PlbhacPuState &pu)
{
    double r = 0;
    for (const auto &[x, t] : pu.measured)
        if (t > 0)
            r = std::max(r, x / t);
    return r;
}

// Its running block started when the previous one ended.
double plbhac_free_in(const PlbhacPuState &pu, double rate, double now_s)
{
    if (rate <= 0)
        return 0;
    double queued = 0;
    for (const PlbhacBlock &o : pu.outstanding)
        queued += static_cast<double>(o.size);
    return std::max(0.0, pu.last_end_s + queued / rate - now_s);
}

double plbhac_water_filled_end(std::vector<std::pair<double, double>> free_rate, double work)
{
    std::sort(free_rate.begin(), free_rate.end());
    double left = work, rate = 0;
    for (size_t k = 0; k < free_rate.size(); ++k) {
        rate += free_rate[k].second;
        const double from = free_rate[k].first;
        const double until = k + 1 < free_rate.size() ? free_rate[k + 1].first : HUGE_VAL;
        if (left <= rate * (until - from))
            return from + left / rate;
        left -= rate * (until - from);
    }
    return 0;
}

}  // namespace hetpu
