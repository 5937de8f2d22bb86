// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC's per-PU execution-time model F_p(x) (paper section 3.1), refined online: every
// finished block adds a point and the curve is refitted (robust, forgetting, subset chosen
// by leave-one-out error; see observation_log.h, curve_fit.h, curve_select.h, and
// fitted_curve.h for how it predicts outside the measured sizes).
//
// Surprises (the paper leaves spikes and speed changes open): once the model rests on
// at least `min_points_for_surprise` points, a measurement inside the observed size range
// that misses the prediction by more than `surprise` (relative) is held back instead of
// fitted. If the next measurement is normal, the held ones were spikes and are discarded. If
// `change_after` consecutive measurements all miss on the same side, the PU's speed changed
// (a competing process, throttling): the older history is dropped and the model restarts from
// the held run, as after training. If the next `change_after` measurements fit the old
// model again and miss the new one, the change was a transient and the old history comes
// back (a model restarted from two slow blocks of nearly one size otherwise took 8 more
// blocks to predict within 25% again, while the planner sized blocks by it). Why not rely on forgetting + robust weights alone: with
// forgetting, a spike in the newest point outweighs the old points at its size, and a curve
// with a spare term bends through it; and while the old regime still holds a good part of
// the weight after a change, an odd curve threading old and new points scores better than
// the true shape. Holding back is the cheap, exact answer to both; the robust IRLS remains
// for everything the rule does not see (early points, sizes outside the range, moderate
// outliers). The restarted model only knows the sizes of the run and extrapolates
// (fitted_curve.h) elsewhere until new blocks widen the range.
//
// Errors: add() throws std::invalid_argument naming the bad value; the model is then
// unchanged. Nothing else throws (GSL is only called on validated input), so a StarPU
// callback needs to catch only that around add().
// Not thread-safe: the scheduler serialises model updates (the paper refits "in the first
// CPU that finishes").
#pragma once

#include "perfmodels/core/curve_select.h"
#include "perfmodels/core/fitted_curve.h"
#include "perfmodels/core/observation_log.h"

#include <optional>
#include <string>
#include <vector>

namespace hetpu {

struct OnlineModelOptions {
    double half_life = 4.0;  // observations; <= 0: no forgetting
    // Most recent points kept. With a half-life of 4 a point 24 blocks old weighs 1.6%, so
    // a longer window buys nothing but fitting time (which PLB-HAC pays every step).
    size_t window = 24;
    // Choosing the basis subset screens ~90 candidates and refits the best 8 robustly (see
    // select_curve); in between, the chosen subset is only refitted (one fit). A new choice
    // is made every `reselect_every` points while the fitted sizes span at least
    // kMinShapeSpread (closer sizes cannot tell one shape from another: select_curve fits
    // them in proportion, and that stays the choice), while the distinct sizes seen are
    // still few and growing (each new one says much about the shape), after a regime
    // change, and whenever the kept subset stops fitting the data.
    int reselect_every = 4;
    // Seconds of measured work (the PU's blocks added since the last choice) before the
    // choice is made again every reselect_every points, and, once the curve has seen more
    // than three sizes, for the other reasons above (a failed fit, a regime change and the
    // first fit choose at once). A choice costs ~1 ms (6-24 points on one core of the
    // 2-core development machine), paid in the completion callback of a block, so this
    // keeps it under ~5% of the PU's busy time. Without it, blocks of a millisecond (a
    // k-means pass over 15 CPU workers and a GPU is ~16 ms in all) spent ten times their
    // own time choosing curves. Simulated, 0.05 s held a GPU at sizes it was no longer
    // cheapest at for longer (7% slower); 0.02 s did not. 0: no floor.
    double select_every_s = 0.02;
    // Consecutive surprises that mean a new regime (0: no holding back). Two: an isolated
    // spike is still discarded, and a PU that really slowed down is believed one block
    // sooner, which matters when blocks last seconds.
    int change_after = 2;
    double surprise = 0.3;  // relative miss that counts as a surprise
    size_t min_points_for_surprise = 5;
    SelectOptions select;  // max terms, parsimony, robust fit settings
};

class OnlineTimeModel {
public:
    explicit OnlineTimeModel(const OnlineModelOptions &opt = OnlineModelOptions());

    // One measurement: `seconds` spent executing a block of `x` elements. x must be finite
    // and > 0, seconds finite and > 0 (a zero time is not a measurement). Refits at once, so
    // predictions stay const and cheap for the solver.
    void add(double x, double seconds);

    // True once the model rests on at least two distinct block sizes (the paper's first fit
    // after the training phase). With one size it is proportional (t = a*x), usable for the
    // training ratio R; with none predict() is 0.
    bool ready() const;
    size_t size() const { return log_.size(); }  // fitted points (held-back ones excluded)
    size_t held() const { return held_.size(); }
    unsigned selections() const { return selections_; }  // basis subsets chosen so far

    // The fitted points, oldest first, and the way back: a model rebuilt from them (the
    // window and forgetting weights follow their order) fits the same curve. restore()
    // bypasses the surprise rule, which judges new measurements against a model, not the
    // model's own history; it validates like add() and throws std::invalid_argument naming
    // the first bad point, leaving the model empty then.
    std::vector<std::pair<double, double>> points() const { return log_.points(); }
    void restore(const std::vector<std::pair<double, double>> &points);
    // The same with the basis subset the saved model was using (terms()): refitted once
    // instead of chosen again (~100 fits, about a millisecond, paid by the first job of a
    // process before its first block). Empty `terms`, or terms that do not fit the points
    // (curve_fits_points), choose as restore(points) does.
    void restore(const std::vector<std::pair<double, double>> &points, const std::vector<BasisFn> &terms);
    const std::vector<BasisFn> &terms() const { return terms_; }  // the subset fitted now
    // The measurements held back as surprises, oldest first. A saved model keeps them with
    // its points, and a restored one replays them through add(): a job of one block per
    // PU (a run from saved models) never sees the next block that would confirm a change
    // or discard a spike; the next run's does. Without them, a PU that had really slowed
    // down missed by the same factor in every later run (seen on the real node with two
    // PoCL devices: an OpenCL worker predicted at 0.20 s ran 0.41-0.44 s, run after run).
    std::vector<std::pair<double, double>> held_points() const;

    double predict(double x) const { return curve_.value(x); }
    double derivative(double x) const { return curve_.derivative(x); }
    const FittedCurve &curve() const { return curve_; }
    std::string describe() const;

private:
    OnlineModelOptions opt_;
    ObservationLog log_;
    FittedCurve curve_;
    struct Held {
        double x, seconds;
    };
    std::vector<Held> held_;  // consecutive surprises on one side, not yet fitted
    int held_side_ = 0;       // +1: slower than predicted, -1: faster
    // The model as it was before the latest regime change, kept until a measurement fits
    // the new regime: if `change_after` in a row fit the old model and miss the new one
    // instead, the change was a transient (another process's burst of a few blocks) and
    // the old history, still right, is restored with them (see add).
    struct BeforeChange {
        ObservationLog log;
        FittedCurve curve;
        std::vector<BasisFn> terms;
        double changed_rate = 0;     // seconds per element of the run that made the change
        std::vector<Held> agreeing;  // measurements since the change that fit the old model only
    };
    std::optional<BeforeChange> before_change_;
    int adds_since_select_ = 0;
    double work_since_select_s_ = 0;  // seconds of the blocks added since the last choice
    unsigned selections_ = 0;
    size_t distinct_at_select_ = 0;
    size_t misses_at_select_ = 0;  // points the chosen curve missed by more than half (curve_misses)
    std::vector<BasisFn> terms_;   // the subset chosen at the last selection
    void refit(bool reselect);
    bool shapeless() const;          // the fitted sizes span less than kMinShapeSpread
    bool choice_affordable() const;  // enough work since the last choice (select_every_s)
    // While before_change_ is kept: true when (x, seconds) completed the evidence of a
    // transient and the old history was restored with it.
    bool back_to_before_change(double x, double seconds);
};

}  // namespace hetpu
