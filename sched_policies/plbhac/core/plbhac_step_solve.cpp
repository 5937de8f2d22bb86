// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_step_solve.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "sched_policies/plbhac/core/plbhac_final.h"
#include "sched_policies/plbhac/core/plbhac_steps.h"
#include "sched_policies/plbhac/core/plbhac_trust.h"

namespace hetpu {

namespace {

// Slope beyond a PU's trust cap, per second per element of its time at the cap: steep
// enough that the solve keeps the PU within a few per mille of the cap.
constexpr double kCapPenalty = 1e3;

// Adapts the fitted models to the solver's TimeCurve. The solver wants exact first and
// second derivatives; the fitted curves give value and slope analytically, and the
// curvature is taken as the central difference of the analytic slope, which is accurate
// to ~1e-7 relative at the block sizes involved (hundreds to millions of elements).
class ModelCurve final : public TimeCurve {
public:
    explicit ModelCurve(const std::function<double(double)> &value, const std::function<double(double)> &slope)
        : value_(value), slope_(slope)
    {}
    TimeEval eval(double x) const override
    {
        const double h = std::max(1e-3, 1e-4 * x);
        const double lo = std::max(x - h, 1e-9);
        return {value_(x), slope_(x), (slope_(x + h) - slope_(lo)) / (x + h - lo)};
    }

private:
    std::function<double(double)> value_, slope_;
};

bool solution_sums_to(const PlbhacState &s, uint64_t w)
{
    uint64_t sum = 0;
    for (uint64_t x : s.solution)
        sum += x;
    return sum == w;
}

}  // namespace

std::vector<PlbhacPu> plbhac_solver_input(const PlbhacState &s, bool align, const std::vector<double> &caps,
                                          std::vector<std::unique_ptr<TimeCurve>> &curves,
                                          const std::vector<double> *scales)
{
    std::vector<PlbhacPu> input;
    for (size_t i = 0; i < s.pus.size(); ++i) {
        const PlbhacPuState *pu = s.pus[i].get();
        const std::int64_t min_block = static_cast<std::int64_t>(pu->min_block);
        // A per-block latency the profiling misses delays the block's end like a later
        // start; held PUs price it per block of their efficient size below. The aligned
        // solve is the last one, whose shares end the job: the job ends when their results
        // are home, so a PU whose results come home late must end its share that much
        // earlier.
        const double ready =
            (align ? plbhac_ready_in(*pu, s.now_s) + pu->home_delay_s : 0.0) + (pu->held > 0 ? 0.0 : pu->latency_s);
        const bool proportional = plbhac_narrow(*pu);
        std::function<double(double)> value, slope;
        if (proportional) {
            const double k = plbhac_model_time(*pu, plbhac_anchor(*pu)) / plbhac_anchor(*pu);
            value = [k](double x) { return k * x; };
            slope = [k](double) { return k; };
        } else {
            const OnlineTimeModel *exec = &pu->exec;
            const double k = pu->surprise_scale;
            value = [exec, k](double x) { return k * exec->predict(x); };
            slope = [exec, k](double x) { return k * exec->derivative(x); };
        }
        // The straggle hedge prices a noisy PU's block longer than predicted (plbhac_hedge_final).
        const double scale = scales && i < scales->size() ? (*scales)[i] : 1.0;
        const TimeCurve *transfer_curve = nullptr;
        if (!proportional && pu->held <= 0) {
            const LinearTransferModel *transfer = &pu->transfer;
            curves.push_back(
                std::make_unique<ModelCurve>([transfer, scale](double x) { return scale * transfer->predict(x); },
                                             [transfer, scale](double x) { return scale * transfer->derivative(x); }));
            transfer_curve = curves.back().get();
        }
        if (pu->held > 0) {
            // Held at its efficient size, a PU runs its share as blocks of that size: its
            // time grows in proportion beyond it, each block paying its latency.
            const double h = pu->held, k_h = plbhac_predict(*pu, static_cast<uint64_t>(h)) / h;
            const LinearTransferModel *transfer = proportional ? nullptr : &pu->transfer;
            const double latency = pu->latency_s;
            value = [value, transfer, h, k_h, latency](double x) {
                return x > h ? k_h * x : value(x) + (transfer ? transfer->predict(x) : 0.0) + latency;
            };
            slope = [slope, transfer, h, k_h](double x) {
                return x > h ? k_h : slope(x) + (transfer ? transfer->derivative(x) : 0.0);
            };
        }
        if (scale != 1.0) {
            value = [value, scale](double x) { return scale * value(x); };
            slope = [slope, scale](double x) { return scale * slope(x); };
        }
        const double cap = i < caps.size() ? caps[i] : 0.0;
        if (cap > 0) {
            const double penalty = kCapPenalty * std::max(value(cap), 1e-9) / cap;
            value = [value, cap, penalty](double x) { return value(x) + (x > cap ? penalty * (x - cap) : 0.0); };
            slope = [slope, cap, penalty](double x) { return slope(x) + (x > cap ? penalty : 0.0); };
        }
        curves.push_back(std::make_unique<ModelCurve>(value, slope));
        const TimeCurve *exec_curve = curves.back().get();
        input.push_back({exec_curve, transfer_curve, min_block, ready});
    }
    return input;
}

void plbhac_solve_step(PlbhacState &s, unsigned step, uint64_t remaining)
{
    uint64_t w = plbhac_step_workload(s, step, remaining);
    // A remainder smaller than a step is solved whole: a last sliver would only add a step.
    if (remaining - w < w / 2 || s.force_final)
        w = remaining;
    s.force_final = false;
    // A solve shares out everything not yet handed out, the rest of a share included.
    // A held PU stays held: it never runs a larger block again to show otherwise, and its
    // model, restarted by the jump between its large and its efficient blocks, no longer
    // holds the evidence.
    for (auto &pu : s.pus) {
        pu->held = std::max(pu->held, plbhac_efficient_size(*pu, s.options.min_step_s));
        pu->share_left = 0;
    }
    s.reserved_known = false;

    // Nothing measured since the last solve and the same workload: the answer could not
    // change, so the step is entered without calling the solver. It still counts as solved:
    // a PU that enters it later, after new measurements, must not re-solve it (only the
    // first PU to enter a step evaluates the model, Algorithm 1), and the tail shrink is
    // counted in steps, so a skipped step must not stall it.
    if (s.solved_step > 0 && s.measurements_since_solve == 0 && w == s.solved_workload) {
        s.solved_step = step;
        return;
    }
    s.solved_workload = w;
    // Only the last solve, which hands out everything left, counts the work queued on each
    // PU: it is the one whose finish times are the run's end. Earlier steps keep the paper's
    // equal durations: a PU uses the latest solution when it enters a step, possibly one
    // solved while it was a step behind, and offsets valid at another PU's solve would then
    // size its block for someone else's queue.
    PlbhacSolveOptions opt;
    opt.granule = static_cast<std::int64_t>(s.rules.granule);
    opt.solver = s.options.solver;
    try {
        // The trust region (plbhac_trust.h): when the solution reaches beyond it, the step
        // shrinks until the most extrapolated PU is within it. solve_times keeps one entry
        // per step (the step's model evaluation, Algorithm 1), summing the re-solves.
        s.solve_times.push_back(0.0);
        std::vector<double> caps(s.pus.size(), 0.0);  // per PU, elements; 0: none
        std::vector<uint64_t> previous;               // the solution before the latest shrink
        uint64_t previous_w = 0;
        bool capped = false;
        for (int attempt = 0;; ++attempt) {
            const bool align = s.options.align_finish && w == remaining;
            // A final solve after the hedge has chosen its k re-solves with it (plbhac_hedge_final).
            const bool hedged = align && s.options.hedge_straggle && s.hedge_k > 0;
            const std::vector<double> scales =
                hedged ? plbhac_hedge_scales(s.hedge_k, plbhac_straggle_spreads(s)) : std::vector<double>();
            std::vector<std::unique_ptr<TimeCurve>> curves;
            std::vector<PlbhacPu> input = plbhac_solver_input(s, align, caps, curves, hedged ? &scales : nullptr);
            try {
                // A capped PU's curve bends sharply at its cap, where Ipopt's interior point
                // crawls; the equal-finish search, which only needs increasing curves,
                // solves it.
                PlbhacSolveOptions o = opt;
                if (capped)
                    o.equal_finish_from_pus = 1;
                PlbhacSolution sol = plbhac_solve(input, static_cast<std::int64_t>(w), o);
                if (align && s.options.hedge_straggle && s.hedge_k < 0)
                    sol = plbhac_hedge_final(s, std::move(sol), input, caps, o);
                else if (hedged)
                    ++s.hedged_solves;
                for (size_t i = 0; i < s.pus.size(); ++i)
                    s.solution[i] = static_cast<uint64_t>(sol.blocks[i]);
                s.solve_times.back() += sol.solve_time_s;
            } catch (const std::exception &) {
                if (attempt == 0)
                    throw;
                // A re-solve of a smaller step failed: the previous attempt's split,
                // scaled to this step, is inside the trust region too (shares scale
                // with the step for the near-linear curves the cap applies to).
                ++s.solve_failures;
                const uint64_t before = std::accumulate(s.solution.begin(), s.solution.end(), uint64_t{0});
                for (size_t i = 0; i < s.pus.size(); ++i)
                    s.solution[i] = std::max(s.round_block(static_cast<uint64_t>(static_cast<double>(s.solution[i]) *
                                                                                 w / std::max<uint64_t>(before, 1))),
                                             s.pus[i]->min_block);
                break;
            }
            const double over = plbhac_trust_excess(s);
            // Shrinking the step assumes shares scale with it. A PU whose model is flat
            // beyond its measured sizes (a fixed cost seen only on tiny blocks) breaks that:
            // its share is most of a large step and nothing of a small one, and shrinking by
            // its excess overshoots to a step that grows nobody, so the steps would never
            // grow. So the step is solved again at its size before the shrink, the PUs that
            // were beyond their trust region capped there instead (their time curves turn
            // steep past the cap).
            if (!capped && !previous.empty() && over * s.options.trust < 1.0) {
                for (size_t i = 0; i < s.pus.size(); ++i)
                    if (plbhac_trust_ratio(*s.pus[i], previous[i], s.options.trust) > 1.0)
                        caps[i] = plbhac_trust_of(*s.pus[i], s.options.trust) * s.pus[i]->size_hi;
                capped = true;
                w = previous_w;
                continue;
            }
            const uint64_t smaller = s.round_block(static_cast<uint64_t>(static_cast<double>(w) / over));
            // A capped PU may end a few per mille past its cap (the penalty is a slope, not
            // a wall): that is not worth another solve.
            if (over <= (capped ? 1.02 : 1.0) || attempt >= (capped ? 4 : 2) || smaller < s.rules.min_block ||
                smaller >= w)
                break;
            previous = s.solution;
            previous_w = w;
            w = smaller;
        }
    } catch (const std::exception &) {
        // Keep going on the previous solution (or a split by measured speeds before the
        // first one): a failed solve must not stop the run.
        ++s.solve_failures;
        if (s.solved_step == 0)
            plbhac_split_by_rates(s, w);
    }
    s.solved_step = step;
    // A failed solve left the previous solution, whose shares do not add up to what is
    // left: nothing is reserved then, and the next step tries again.
    s.final_solved = w == remaining && solution_sums_to(s, w);
    s.measurements_since_solve = 0;
    s.miss_since_solve_s = 0;
    s.reserved_known = false;  // solution was written
}

// Measured throughputs, not an even split: an even split gives a slow CPU as much as a
// GPU. Read at the largest size each PU has run, inside its measured range.
void plbhac_split_by_rates(PlbhacState &s, uint64_t w)
{
    std::vector<double> rate(s.pus.size(), 0.0);
    double sum = 0;
    for (size_t i = 0; i < s.pus.size(); ++i) {
        const PlbhacPuState &pu = *s.pus[i];
        const double x = pu.size_hi > 0 ? pu.size_hi : static_cast<double>(s.x_init);
        const double t = plbhac_predict(pu, static_cast<uint64_t>(x));
        rate[i] = t > 0 && std::isfinite(t) ? x / t : 0.0;
        sum += rate[i];
    }
    for (size_t i = 0; i < s.pus.size(); ++i) {
        const double share = sum > 0 ? rate[i] / sum : 1.0 / static_cast<double>(s.pus.size());
        uint64_t x = s.round_block(static_cast<uint64_t>(share * static_cast<double>(w)));
        if (s.options.trust > 0 && s.pus[i]->size_hi > 0)
            x = std::min(x, s.round_block(static_cast<uint64_t>(plbhac_trust_of(*s.pus[i], s.options.trust) *
                                                                s.pus[i]->size_hi)));
        s.solution[i] = std::max(x, s.pus[i]->min_block);
    }
}

}  // namespace hetpu
