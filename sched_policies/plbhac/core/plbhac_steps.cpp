// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_steps.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <gsl/gsl_fit.h>

namespace hetpu {

namespace {

// The tail shrinks a step at most to this fraction of a regular one: below, its blocks
// only buy per-block overhead.
constexpr double kMinTailShrink = 0.25;

}  // namespace

uint64_t plbhac_step_workload(PlbhacState &s, unsigned step, uint64_t remaining)
{
    const bool in_tail = static_cast<double>(s.rules.total - remaining) >= s.options.tail_fraction * s.rules.total;
    if (in_tail && s.tail_start_step == 0)
        s.tail_start_step = step;
    // The execution phase cuts what is left after training into `steps` virtual steps; a
    // warm start may use another count (options.warm_steps).
    if (s.step_workload == 0) {
        unsigned steps = s.warm_started ? s.options.warm_steps : s.options.steps;
        // One PU has nothing to balance: steps would only cut its work into blocks that
        // each pay its per-block cost. The trust region still grows its blocks from what it
        // has run, and holds it at an efficient size if it has one.
        if (s.pus.size() == 1)
            steps = 1;
        // A job too short for its steps: each step costs a solve and a block per PU, so a
        // step much shorter than min_step_s is mostly overhead. The job's length is
        // estimated from every PU's measured throughput at its largest block.
        if (s.options.min_step_s > 0) {
            const double t = plbhac_ideal_seconds(s, remaining);
            if (t > 0)
                steps = std::clamp(static_cast<unsigned>(t / s.options.min_step_s), 1u, std::max(1u, steps));
        }
        s.step_workload = std::max<uint64_t>(remaining / std::max(1u, steps), s.rules.min_block);
    }
    // Every later step, outside the tail, re-reads the PUs' fixed costs from their measured
    // blocks and enlarges the steps when fewer pay (plbhac_overhead_steps); never smaller.
    // A warm start does so from its first step, its saved blocks measured already. The
    // tail's first step too, even the first solve's: the tail shrinks from that step's size,
    // so it sets the size of every step left.
    const bool tail_begins = s.tail_start_step == step;
    if ((!s.tail_start_step || tail_begins) && (s.solved_step > 0 || s.warm_started || tail_begins)) {
        const unsigned left = static_cast<unsigned>(std::max<uint64_t>(1, remaining / s.step_workload));
        const unsigned n = plbhac_overhead_steps(s, left, remaining);
        if (n < left)
            s.step_workload = std::max(s.step_workload, remaining / n);
    }
    double workload = static_cast<double>(s.step_workload);
    // The tail shrinks each step by (1 - alpha), down to kMinTailShrink of a regular step,
    // so that the PUs finish together.
    if (s.tail_start_step)
        workload *= std::max(kMinTailShrink,
                             std::pow(1.0 - s.options.alpha, static_cast<double>(step - s.tail_start_step + 1)));
    return std::min<uint64_t>(remaining,
                              std::max<uint64_t>(s.round_block(static_cast<uint64_t>(workload)), s.rules.min_block));
}

// Each step costs every PU one block's fixed cost c, and each step's misprediction costs
// about step_error of a step's length, so steps x c + step_error T / steps is least at
// sqrt(step_error T / c). At least min_steps, because a slowdown needs steps to be seen and
// acted on, but not at any price: the floor's fixed costs may take at most kMaxFloorCost of
// the time left. A PU whose fixed cost cannot be read counts as having none (more steps).
unsigned plbhac_overhead_steps(const PlbhacState &s, unsigned steps, uint64_t remaining)
{
    if (s.options.step_error <= 0 || steps <= s.options.min_steps)
        return steps;
    double rate_sum = 0, cost_sum = 0;
    for (const auto &pu : s.pus) {
        const double rate = plbhac_measured_rate(*pu);
        if (rate <= 0)
            return steps;
        const double c = std::max(0.0, plbhac_fixed_cost(*pu));  // unreadable (-1): none, so more steps
        rate_sum += rate;
        cost_sum += rate * c;
    }
    const double t = plbhac_ideal_seconds(s, remaining);
    if (rate_sum <= 0 || cost_sum <= 0 || t <= 0)
        return steps;
    const double c = cost_sum / rate_sum;
    const double n = std::ceil(std::sqrt(s.options.step_error * t / c));
    if (n >= steps)
        return steps;
    constexpr double kMaxFloorCost = 0.25;
    const unsigned least = std::clamp(static_cast<unsigned>(kMaxFloorCost * t / c), 1u, s.options.min_steps);
    return std::max(least, static_cast<unsigned>(n));
}

// From measured blocks rather than the fitted curve: a curve's tangent intercept at large
// sizes is ill-conditioned (a percent of model error is a large share of the intercept).
// The line goes through the blocks of at least a quarter of the largest size, beyond the
// small sizes where an accelerator's curve is still concave; when those span less than 2x
// (steps of one size after a trust-region ramp), down to a sixteenth, or the PU would never
// show its cost.
double plbhac_fixed_cost(const PlbhacPuState &pu)
{
    double c = plbhac_fixed_cost_of(pu.measured, 4);
    if (c < 0)
        c = plbhac_fixed_cost_of(pu.measured, 16);
    return c >= 0 || pu.saved_blocks.empty() ? c : plbhac_fixed_cost_of(pu.saved_blocks, 4);
}

// At least three blocks spanning 2x or more. The estimate is lowered by one standard error
// (residual-based, at least kNoise of the times), so that noise gives more steps, not
// fewer. A line that does not rise reads as the blocks' mean time, all of it fixed cost.
double plbhac_fixed_cost_of(const std::vector<std::pair<double, double>> &blocks, double window)
{
    constexpr double kNoise = 0.02;  // relative timing noise assumed at least
    double x_hi = 0;
    for (const auto &m : blocks)
        x_hi = std::max(x_hi, m.first);
    std::vector<double> xs, ts;
    for (const auto &m : blocks)
        if (m.first >= x_hi / window) {
            xs.push_back(m.first);
            ts.push_back(m.second);
        }
    const size_t n = xs.size();
    if (n < 3 || *std::min_element(xs.begin(), xs.end()) > x_hi / 2)
        return -1;
    // Unit weights: gsl_fit_wlinear's cov00 is then the intercept's variance per unit of
    // residual variance, which is scaled below by the larger of the residual variance and
    // the assumed noise (an exact fit through three points must not look certain).
    const std::vector<double> ws(n, 1.0);
    double c, slope, cov00, cov01, cov11, rss;
    gsl_fit_wlinear(xs.data(), 1, ws.data(), 1, ts.data(), 1, n, &c, &slope, &cov00, &cov01, &cov11, &rss);
    if (!std::isfinite(slope) || !std::isfinite(c))
        return -1;
    const double mt = std::accumulate(ts.begin(), ts.end(), 0.0) / static_cast<double>(n);
    if (!(slope > 0)) {
        // Blocks spanning 2x or more that took no longer as they grew: their time is all
        // fixed cost, as far as they show (the least-squares line with a slope of at least
        // 0 is their mean), lowered by the mean's standard error.
        double ss = 0;
        for (double t : ts)
            ss += (t - mt) * (t - mt);
        const double s2 = std::max(ss / static_cast<double>(n - 1), (kNoise * mt) * (kNoise * mt));
        return std::max(0.0, mt - std::sqrt(s2 / static_cast<double>(n)));
    }
    const double s2 = std::max(rss / static_cast<double>(n - 2), (kNoise * mt) * (kNoise * mt));
    return std::max(0.0, c - std::sqrt(s2 * cov00));
}

// Device memory exceeded, a cache thrashed: past such a size the curve is convex, and a
// step cut for fewer, larger blocks would make every block dearer. The PU's most efficient
// measured block, when at least two blocks of three times its size or more were all
// kConvex dearer per element, or one was twice that (far beyond timing noise).
double plbhac_efficient_size(const PlbhacPuState &pu, double min_step_s)
{
    constexpr double kConvex = 0.25;
    // Blocks shorter than a quarter of the shortest worthwhile step do not count: held
    // there, a PU would run very many blocks whose per-task costs no profile shows. Nor do
    // blocks shorter than kMinEvidence, whatever the step length: a few milliseconds are
    // within the jitter of a loaded machine, and a hold is never lifted.
    constexpr double kMinEvidence = 0.05;
    const double shortest = std::max(min_step_s / 4, kMinEvidence);
    double best_x = 0, best = HUGE_VAL;
    for (const auto &[x, t] : pu.measured)
        if (x > 0 && t >= shortest && t > 0 && t / x < best) {
            best = t / x;
            best_x = x;
        }
    if (best_x <= 0)
        return 0;
    unsigned larger = 0;
    double cheapest_larger = HUGE_VAL;
    for (const auto &[x, t] : pu.measured)
        if (x >= 3 * best_x) {
            cheapest_larger = std::min(cheapest_larger, t / x);
            ++larger;
        }
    const double dearer = larger >= 2 ? 1 + kConvex : 1 + 2 * kConvex;
    return larger >= 1 && cheapest_larger >= dearer * best ? best_x : 0;
}

// Read inside the PU's measured range, where its model is sound.
double plbhac_measured_rate(const PlbhacPuState &pu)
{
    const double x = pu.held > 0 ? pu.held : pu.size_hi;
    if (x <= 0)
        return 0;
    const double t = plbhac_predict(pu, static_cast<uint64_t>(x));
    return t > 0 && std::isfinite(t) ? x / t : 0;
}

double plbhac_ideal_seconds(const PlbhacState &s, uint64_t w)
{
    double rate = 0;
    for (const auto &pu : s.pus)
        rate += plbhac_measured_rate(*pu);
    return rate > 0 ? static_cast<double>(w) / rate : 0.0;
}

double plbhac_common_end_s(const PlbhacState &s, uint64_t remaining)
{
    std::vector<std::pair<double, double>> free_rate;  // (ready in, elements per second)
    for (const auto &pu : s.pus) {
        const double rate = plbhac_measured_rate(*pu);
        if (rate <= 0)
            return 0;
        free_rate.emplace_back(plbhac_ready_in(*pu, s.now_s), rate);
    }
    return plbhac_water_filled_end(std::move(free_rate), static_cast<double>(remaining));
}

}  // namespace hetpu
