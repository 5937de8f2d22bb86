// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_solve.h"

#include "sched_policies/plbhac/core/plbhac_equal_finish.h"
#include "sched_policies/plbhac/core/plbhac_rounding.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace hetpu {
namespace {

// ready + F_p + G_p as one curve for the NLP (derivatives add).
class SumCurve : public TimeCurve {
public:
    SumCurve(const TimeCurve *f, const TimeCurve *g, double ready) : f_(f), g_(g), ready_(ready) {}
    TimeEval eval(double x) const override
    {
        TimeEval e = f_->eval(x);
        e.value += ready_;
        if (g_ != nullptr) {
            const TimeEval t = g_->eval(x);
            e.value += t.value;
            e.d1 += t.d1;
            e.d2 += t.d2;
        }
        return e;
    }

private:
    const TimeCurve *f_, *g_;
    double ready_;
};

// Whether every curve is non-decreasing over the block sizes a solve can give, sampled at
// log-spaced sizes from one element (or W / 1e9) to W, but for dips the equal-finish
// search can take:
//  - smaller than a millionth of the curve's time for W: fits extrapolated below their
//    measured sizes slope down by ~1e-11 s per element near zero (seen on every k-means
//    pass on the CPU + OpenCL node), which moves no block;
//  - within kLocalDip of the time before the dip: the curve choice accepts fits that dip
//    by up to 2% between their measured sizes (timing noise, curve_rises_over_range), and
//    such a dip sent every solve of a node of 15 CPUs and a GPU to Ipopt (seen in
//    simulation: a CPU's curve 0.0016 s below its measured sizes, a hair less inside them;
//    Ipopt took about a millisecond per solve of 16 PUs, 4-68 ms per 20 ms job, under the
//    runtime's planner lock). The search's inverse returns a size whose time is at most
//    the target, so over such a dip a PU's share is at most the dip's width short of the
//    exact optimum's, and every PU still ends by the makespan it reports.
// The fitted curves are smooth and of low order, so a dip between samples would be a curve
// no fit produces. A curve that really dips (a fitted quadratic with a negative linear
// term) or is not finite goes to Ipopt.
bool increasing(const std::vector<const TimeCurve *> &curves, double W)
{
    constexpr int kSamples = 64;
    constexpr double kDip = 1e-6;
    constexpr double kLocalDip = 0.02;
    const double lo = std::max(1.0, W * 1e-9);
    if (!(W > lo))
        return false;
    const double ratio = std::pow(W / lo, 1.0 / (kSamples - 1));
    for (const TimeCurve *c : curves) {
        const double scale = std::fabs(c->eval(W).value);
        double x = lo, peak = -std::numeric_limits<double>::infinity();
        for (int i = 0; i < kSamples; ++i, x *= ratio) {
            const double v = c->eval(std::min(x, W)).value;
            if (!std::isfinite(v) || !std::isfinite(scale))
                return false;
            peak = std::max(peak, v);
            if (peak - v > std::max(kDip * scale, kLocalDip * peak))
                return false;
        }
    }
    return true;
}

void validate(const std::vector<PlbhacPu> &pus, std::int64_t W, const PlbhacSolveOptions &opt)
{
    if (pus.empty())
        throw PlbhacInputError("plbhac_solve: no PU");
    if (W < 0)
        throw PlbhacInputError("plbhac_solve: workload must be >= 0");
    if (opt.granule < 1)
        throw PlbhacInputError("plbhac_solve: granule must be >= 1");
    if (!(opt.negligible_share >= 0 && opt.negligible_share < 1))
        throw PlbhacInputError("plbhac_solve: negligible_share must be in [0, 1)");
    for (std::size_t p = 0; p < pus.size(); ++p) {
        if (pus[p].exec == nullptr)
            throw PlbhacInputError("plbhac_solve: PU " + std::to_string(p) + " has no execution curve");
        if (pus[p].min_block < 0)
            throw PlbhacInputError("plbhac_solve: PU " + std::to_string(p) + " has a negative min_block");
        if (!(pus[p].ready_s >= 0) || !std::isfinite(pus[p].ready_s))
            throw PlbhacInputError("plbhac_solve: PU " + std::to_string(p) + " has a negative or non-finite ready_s");
    }
}

// The PUs that can help: without those busy past the time the best single PU (its queue
// counted) would take for all of W, or past the optimum of the PUs that start sooner.
std::vector<std::size_t> first_active(const std::vector<SumCurve> &total, const std::vector<PlbhacPu> &pus,
                                      std::int64_t W, PlbhacSolution &sol)
{
    const std::size_t n = pus.size();
    // A PU busy for longer than the whole of W would take on the best single PU (its
    // queue counted) cannot help: any split that gives it work ends later. Left in, its
    // ready time pins the makespan whatever the others get, the optimum is flat in
    // their shares, and Ipopt wanders to its iteration limit (seen in simulation: a CPU
    // still running a 3 s training block at the final solve of 0.5 s blocks).
    double alone = std::numeric_limits<double>::infinity();
    for (std::size_t p = 0; p < n; ++p)
        alone = std::min(alone, total[p].eval(static_cast<double>(W)).value);
    std::vector<std::size_t> active;
    for (std::size_t p = 0; p < n; ++p) {
        if (pus[p].ready_s > 0 && total[p].eval(1.0).value >= alone)
            sol.outcome[p] = PlbhacOutcome::NoGain;
        else
            active.push_back(p);
    }
    if (active.empty()) {  // only with flat curves (T(1) == T(W)): keep the best one
        std::size_t best = 0;
        for (std::size_t p = 1; p < n; ++p)
            if (total[p].eval(static_cast<double>(W)).value < total[best].eval(static_cast<double>(W)).value)
                best = p;
        sol.outcome[best] = PlbhacOutcome::Active;
        active.push_back(best);
    }
    // Likewise, but counting what the others can do together: a PU whose empty block
    // ends after the PUs that start sooner have finished everything gets nothing at the
    // optimum. Dropping those one per pass (step 2 below) costs a solve per PU when many
    // are busy past the end, as in a final re-share of a large cluster; this finds them
    // all in one go, and step 2 still catches what it leaves.
    if (active.size() > 1) {
        std::vector<const TimeCurve *> curves;
        for (std::size_t p : active)
            curves.push_back(&total[p]);
        const std::vector<bool> empty = empty_at_optimum(curves, static_cast<double>(W));
        std::vector<std::size_t> keep;
        for (std::size_t i = 0; i < active.size(); ++i) {
            if (empty[i])
                sol.outcome[active[i]] = PlbhacOutcome::NoGain;
            else
                keep.push_back(active[i]);
        }
        active = std::move(keep);
    }
    return active;
}

// The passes of one solve (plbhac_solve): solve the active PUs, drop those that cannot help
// or stay below their minimum, bring back those that may help again, until none changes.
// Each pass removes at least one PU, brings back PUs that were never brought back before, or
// stops, so there are at most 2n passes. Dropped PUs are re-solved rather than their share
// spread proportionally over the others: with non-linear curves a proportional spread would
// break the equal finish times that are the point of the method, and a solve costs about a
// millisecond.
struct Passes {
    const std::vector<PlbhacPu> &pus;
    const std::int64_t W;
    const PlbhacSolveOptions &opt;
    const std::vector<SumCurve> &total;
    const std::vector<double> &min_eff;
    PlbhacSolution &sol;
    std::vector<std::size_t> &active;
    const std::size_t n = pus.size();
    // Whether each PU's curve rises (increasing), sampled once per solve, not once per pass:
    // a final solve of 16 PUs may take a dozen passes.
    std::vector<signed char> rises = std::vector<signed char>(n, -1);
    std::vector<bool> readmitted = std::vector<bool>(n, false);

    bool all_rise(const std::vector<std::size_t> &set)
    {
        for (std::size_t p : set) {
            if (rises[p] < 0)
                rises[p] = increasing({&total[p]}, static_cast<double>(W)) ? 1 : 0;
            if (!rises[p])
                return false;
        }
        return true;
    }

    MakespanNlpResult solve_for(const std::vector<std::size_t> &set)
    {
        std::vector<const TimeCurve *> curves;
        for (std::size_t p : set)
            curves.push_back(&total[p]);
        const bool many = curves.size() >= opt.equal_finish_from_pus;
        MakespanNlpResult r;
        bool answered = false;
        if (many || (opt.solver == PlbhacSolver::Auto && all_rise(set))) {
            r = solve_makespan_equal_finish(curves, static_cast<double>(W));
            answered = r.converged || many;
            r.iterations = 0;  // Ipopt's: none
        }
        if (!answered)
            r = solve_makespan_nlp(curves, static_cast<double>(W), opt.nlp);
        // Ipopt may stop at a merely "acceptable" point, and when the PUs' queues reach far
        // past the work left the problem is nearly flat there: seen in simulation, a
        // final re-share of 0.1 s of work behind 2.2 s queues ended after 171 iterations
        // with one CPU given 1.2 s of it, the others under 0.1 s (makespan 3.46 s where
        // about 2.2 s was possible), and the passes below then drop the PUs left with
        // nothing. The equal-finish search is exact for increasing curves and costs
        // microseconds at these sizes, so it checks every Ipopt answer and its own is
        // kept when it ends sooner or Ipopt failed (Ipopt's stays for curves the search
        // cannot invert).
        if (!answered) {
            MakespanNlpResult e = solve_makespan_equal_finish(curves, static_cast<double>(W));
            if (e.converged && (!r.converged || e.makespan_s < r.makespan_s * (1 - 1e-9))) {
                e.iterations = r.iterations;  // Ipopt's, spent before the search's answer was kept
                e.ipopt_status_name = r.ipopt_status_name + "+Equal_Finish_Search";
                r = std::move(e);
            }
        }
        return r;
    }

    // PUs left out for starting after the end may start before it once PUs below their
    // minimum have gone (the others' end rises): each such PU gets one more chance, so
    // the passes still end.
    bool readmit(double makespan_s)
    {
        bool any = false;
        for (std::size_t p = 0; p < n; ++p) {
            if (sol.outcome[p] == PlbhacOutcome::NoGain && !readmitted[p] && total[p].eval(1.0).value < makespan_s) {
                sol.outcome[p] = PlbhacOutcome::Active;
                readmitted[p] = true;
                active.push_back(p);
                any = true;
            }
        }
        return any;
    }

    void run()
    {
        for (;;) {
            MakespanNlpResult r = solve_for(active);
            if (active.size() > 1)
                ++sol.nlp_solves;
            sol.ipopt_status = r.ipopt_status;
            sol.ipopt_status_name = r.ipopt_status_name;
            sol.ipopt_iterations += std::max(r.iterations, 0);
            if (!r.converged && active.size() > 1) {
                // The same flat optimum with a milder queue: the PU whose queue ends last
                // may pin the makespan without any work. Take it out and solve again.
                std::size_t pin = n;
                double latest = 0;
                for (std::size_t p : active) {
                    const double start = total[p].eval(1.0).value;
                    if (pus[p].ready_s > 0 && start > latest) {
                        latest = start;
                        pin = p;
                    }
                }
                if (pin != n) {
                    sol.outcome[pin] = PlbhacOutcome::NoGain;
                    active.erase(std::find(active.begin(), active.end(), pin));
                    continue;
                }
            }
            if (!r.converged)
                throw PlbhacSolveError("plbhac_solve: Ipopt failed (" + r.ipopt_status_name + ") for " +
                                           std::to_string(active.size()) + " PUs and W = " + std::to_string(W),
                                       r.ipopt_status);
            std::fill(sol.shares.begin(), sol.shares.end(), 0.0);
            for (std::size_t i = 0; i < active.size(); ++i)
                sol.shares[active[i]] = r.shares[i];
            sol.continuous_makespan_s = r.makespan_s;
            if (active.size() == 1) {
                if (readmit(r.makespan_s))
                    continue;
                break;  // the last PU takes all of W, even below its minimum: work must go somewhere
            }

            // Step 2: no gain. Such a PU's model cannot finish even a tiny block before the
            // others finish everything (typically its latency T_p(0) >= the makespan of the
            // rest). The smooth model charges it T_p(0) even for an empty block, which pins t
            // there, so it must leave the problem before the others' shares mean anything.
            // All of them can go at once: taking out a PU with no share leaves the others'
            // makespan where it was, so none of them could help now (one whose start a later
            // drop moves the end past is brought back, readmit). At least one PU keeps >= W/k.
            std::vector<std::size_t> keep;
            for (std::size_t p : active) {
                if (sol.shares[p] <= opt.negligible_share * static_cast<double>(W))
                    sol.outcome[p] = PlbhacOutcome::NoGain;
                else
                    keep.push_back(p);
            }
            if (keep.size() < active.size()) {
                active = keep;
                continue;
            }

            // Step 3: minimum block. The PU furthest below its minimum (smallest share /
            // minimum) goes per pass: the others then get more work and may clear their
            // minimum, which dropping them all at once would miss. But the others' makespan
            // can rise no higher than the optimum without every PU now below its minimum
            // (those above it only gain as PUs go), so a PU whose minimum block alone ends
            // after that can never clear it, and all such PUs go in one pass: a final
            // re-share of 1,024 PUs, where hundreds are left a sliver of the last work,
            // otherwise takes a pass per PU (seen in simulation: ~50 passes per re-share).
            std::vector<std::size_t> below, above;
            for (std::size_t p : active)
                (min_eff[p] > 0 && sol.shares[p] < min_eff[p] ? below : above).push_back(p);
            if (below.empty()) {
                if (readmit(r.makespan_s))
                    continue;
                break;
            }
            std::vector<std::size_t> hopeless;
            if (below.size() > 1 && !above.empty()) {
                const MakespanNlpResult ceiling = solve_for(above);
                ++sol.nlp_solves;
                sol.ipopt_iterations += std::max(ceiling.iterations, 0);
                if (ceiling.converged)
                    for (std::size_t p : below)
                        if (total[p].eval(min_eff[p]).value > ceiling.makespan_s)
                            hopeless.push_back(p);
            }
            if (hopeless.empty())
                hopeless.push_back(*std::min_element(below.begin(), below.end(), [&](std::size_t x, std::size_t y) {
                    return sol.shares[x] / min_eff[x] < sol.shares[y] / min_eff[y];
                }));
            for (std::size_t p : hopeless)
                sol.outcome[p] = PlbhacOutcome::BelowMinimum;
            active.erase(std::remove_if(active.begin(), active.end(),
                                        [&](std::size_t p) { return sol.outcome[p] != PlbhacOutcome::Active; }),
                         active.end());
        }
    }
};

}  // namespace

const char *plbhac_outcome_name(PlbhacOutcome o)
{
    switch (o) {
    case PlbhacOutcome::Active: return "active";
    case PlbhacOutcome::NoGain: return "no_gain";
    case PlbhacOutcome::BelowMinimum: return "below_minimum";
    case PlbhacOutcome::RoundedToZero: return "rounded_to_zero";
    }
    return "unknown";
}

PlbhacSolution plbhac_solve(const std::vector<PlbhacPu> &pus, std::int64_t W, const PlbhacSolveOptions &opt)
{
    const auto t0 = std::chrono::steady_clock::now();
    validate(pus, W, opt);

    const std::size_t n = pus.size();
    std::vector<SumCurve> total;
    total.reserve(n);
    for (const PlbhacPu &pu : pus)
        total.emplace_back(pu.exec, pu.transfer, pu.ready_s);

    PlbhacSolution sol;
    sol.blocks.assign(n, 0);
    sol.finish_s.assign(n, 0.0);
    sol.shares.assign(n, 0.0);
    sol.outcome.assign(n, PlbhacOutcome::Active);
    sol.ipopt_status_name = ipopt_status_name(0);

    if (W > 0) {
        // A minimum that is not a multiple of the granule could never be met exactly; round it
        // up so that "share >= minimum" survives the flooring in round_to_granule.
        std::vector<double> min_eff(n);
        for (std::size_t p = 0; p < n; ++p)
            min_eff[p] = static_cast<double>((pus[p].min_block + opt.granule - 1) / opt.granule * opt.granule);

        std::vector<std::size_t> active = first_active(total, pus, W, sol);
        Passes{pus, W, opt, total, min_eff, sol, active}.run();
        for (std::size_t p = 0; p < n; ++p)
            if (sol.outcome[p] != PlbhacOutcome::Active)
                sol.shares[p] = 0.0;

        // Step 4. A share >= min_eff (a multiple of the granule) floors to >= min_eff, and
        // rounding only adds to that, so the minimum still holds after rounding.
        sol.blocks = round_to_granule(sol.shares, W, opt.granule);
    }

    for (std::size_t p = 0; p < n; ++p) {
        if (sol.blocks[p] > 0) {
            sol.finish_s[p] = total[p].eval(static_cast<double>(sol.blocks[p])).value;
            sol.makespan_s = std::max(sol.makespan_s, sol.finish_s[p]);
        } else if (sol.outcome[p] == PlbhacOutcome::Active && W > 0) {
            sol.outcome[p] = PlbhacOutcome::RoundedToZero;
        }
    }
    sol.solve_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return sol;
}

}  // namespace hetpu
