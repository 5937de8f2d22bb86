// SPDX-License-Identifier: LGPL-2.1-or-later
#include "perfmodels/core/online_model.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace hetpu {

OnlineTimeModel::OnlineTimeModel(const OnlineModelOptions &opt) : opt_(opt), log_(opt.half_life, opt.window) {}

void OnlineTimeModel::add(double x, double seconds)
{
    if (!std::isfinite(x) || x <= 0.0) {
        std::ostringstream os;
        os << "execution model: block size must be a positive finite number of elements, got " << x;
        throw std::invalid_argument(os.str());
    }
    if (!std::isfinite(seconds) || seconds <= 0.0) {
        std::ostringstream os;
        os << "execution model: execution time must be positive and finite, got " << seconds << " s";
        throw std::invalid_argument(os.str());
    }
    if (before_change_ && back_to_before_change(x, seconds))
        return;
    const bool checkable = opt_.change_after > 0 && ready() && log_.size() >= opt_.min_points_for_surprise &&
                           x >= log_.min_x() && x <= log_.max_x();
    const double ratio = checkable ? seconds / predict(x) : 1.0;
    const int side = ratio > 1.0 + opt_.surprise ? 1 : ratio < 1.0 / (1.0 + opt_.surprise) ? -1 : 0;
    if (side != 0) {
        if (side != held_side_)
            held_.clear();
        held_side_ = side;
        held_.push_back({x, seconds});
        if (held_.size() < static_cast<size_t>(opt_.change_after))
            return;  // maybe a spike: wait for the next measurement
        double run_x = 0, run_s = 0;
        for (const Held &h : held_) {
            run_x += h.x;
            run_s += h.seconds;
        }
        before_change_ = BeforeChange{log_, curve_, terms_, run_s / run_x, {}};
        log_.drop_older(0);  // a run: the PU changed speed, restart from the run
        for (const Held &h : held_)
            log_.add(h.x, h.seconds);
        held_.clear();
        held_side_ = 0;
        refit(true);
        return;
    }
    held_.clear();  // the held measurements were isolated spikes
    held_side_ = 0;
    // Sizes that span less than kMinShapeSpread do not tell one curve shape from another:
    // the kept subset is refitted (and chosen again if it stops fitting or is not the
    // proportional one such sizes get, see refit), but not chosen again every few points.
    // Choosing costs ~90 screening fits and 8 robust ones (~1 ms against 0.02 ms for one
    // fit), paid in the completion callback of the block, and a job's last callback delays
    // its end: k-means' passes, ~27 ms with one block per PU, each PU's sizes within 4% of
    // each other, paid it every fourth pass.
    log_.add(x, seconds);
    ++adds_since_select_;
    work_since_select_s_ += seconds;
    refit(!shapeless() && adds_since_select_ >= opt_.reselect_every && choice_affordable());
}

bool OnlineTimeModel::choice_affordable() const
{
    return opt_.select_every_s <= 0 || work_since_select_s_ >= opt_.select_every_s;
}

bool OnlineTimeModel::back_to_before_change(double x, double seconds)
{
    const auto fits = [&](double predicted) {
        const double r = predicted > 0 ? seconds / predicted : HUGE_VAL;
        return r <= 1.0 + opt_.surprise && r >= 1.0 / (1.0 + opt_.surprise);
    };
    // The new regime as the run that made it showed it: in proportion to its blocks (a
    // curve fitted on two blocks of nearly one size says nothing of other sizes, and the
    // model refitted since bends through the measurements being judged).
    if (!fits(before_change_->curve.value(x)) || fits(before_change_->changed_rate * x)) {
        before_change_.reset();  // the new regime holds (or neither explains it: keep the new)
        return false;
    }
    before_change_->agreeing.push_back({x, seconds});
    if (before_change_->agreeing.size() < static_cast<size_t>(opt_.change_after))
        return false;  // fitted into the new regime meanwhile, as any measurement
    BeforeChange before = std::move(*before_change_);
    before_change_.reset();
    log_ = std::move(before.log);
    terms_ = std::move(before.terms);
    misses_at_select_ = 0;  // judged afresh on the history it comes back to
    for (const Held &h : before.agreeing)
        log_.add(h.x, h.seconds);
    held_.clear();
    held_side_ = 0;
    refit(false);
    return true;
}

void OnlineTimeModel::restore(const std::vector<std::pair<double, double>> &points) { restore(points, {}); }

void OnlineTimeModel::restore(const std::vector<std::pair<double, double>> &points, const std::vector<BasisFn> &terms)
{
    OnlineTimeModel fresh(opt_);
    for (const auto &[x, seconds] : points) {
        if (!std::isfinite(x) || x <= 0.0 || !std::isfinite(seconds) || seconds <= 0.0) {
            std::ostringstream os;
            os << "execution model: stored point (" << x << " elements, " << seconds << " s) is not a measurement";
            *this = OnlineTimeModel(opt_);
            throw std::invalid_argument(os.str());
        }
        fresh.log_.add(x, seconds);
    }
    if (!fresh.log_.empty()) {
        if (terms.empty()) {
            fresh.refit(true);
        } else {
            fresh.terms_ = terms;
            fresh.distinct_at_select_ = distinct_sizes(fresh.log_.fit_data(true).u);
            // When the saved terms were chosen is not known: a choice they need is affordable.
            fresh.work_since_select_s_ = opt_.select_every_s;
            fresh.refit(false);
        }
    }
    *this = std::move(fresh);
}

void OnlineTimeModel::refit(bool reselect)
{
    const FitData data = log_.fit_data(true);
    SubsetFit fit;
    const size_t distinct = distinct_sizes(data.u);
    // The reasons below wait for choice_affordable() once the curve has seen more than three
    // sizes (the first three choose the shape and are cheap: few points); reselect from the
    // caller does not wait.
    const bool affordable = distinct <= 3 || choice_affordable();
    // While distinct sizes are few, each new one changes which subsets are admissible and
    // says much about the curve's shape: choose again.
    if (affordable && distinct != distinct_at_select_ && distinct <= 6)
        reselect = true;
    // A window that has narrowed to close sizes keeps no shape chosen on wider ones: refitted
    // there, a bend would price other sizes by noise (select_curve gives it in proportion).
    if (affordable && distinct > 2 && shapeless() && terms_ != std::vector<BasisFn>{BasisFn::X})
        reselect = true;
    if (!reselect && !terms_.empty()) {
        fit = fit_subset(data, terms_, opt_.select.fit);
        // A point that no candidate fits (a lone first block that paid one-time costs) is
        // missed by every choice: only a miss the last choice did not have is news. Without
        // that, such a point chose again at every refit (~3 ms each, in the callback of
        // every block of that PU, seen on the real node's grn CPU worker).
        reselect = !fit.ok || (affordable && curve_misses(fit, data) > misses_at_select_);
    } else {
        reselect = true;
    }
    if (reselect) {
        fit = select_curve(data, opt_.select);
        ++selections_;
        terms_ = fit.terms;
        adds_since_select_ = 0;
        work_since_select_s_ = 0;
        distinct_at_select_ = distinct;
        misses_at_select_ = curve_misses(fit, data);
    }
    // Floor at 0.1% of the fastest observed block: a time model must stay positive, or the
    // equal-finish-time solve would hand this PU unbounded work.
    curve_ = FittedCurve(fit.terms, fit.coef, log_.max_x(), log_.min_x(), log_.max_x(), 1e-3 * log_.min_time());
}

std::vector<std::pair<double, double>> OnlineTimeModel::held_points() const
{
    std::vector<std::pair<double, double>> out;
    for (const Held &h : held_)
        out.emplace_back(h.x, h.seconds);
    return out;
}

bool OnlineTimeModel::shapeless() const { return log_.max_x() < kMinShapeSpread * log_.min_x(); }

bool OnlineTimeModel::ready() const { return log_.size() >= 2 && distinct_sizes(log_.fit_data(true).u) >= 2; }

std::string OnlineTimeModel::describe() const
{
    std::ostringstream os;
    os << curve_.describe() << " (" << log_.size() << " points)";
    return os.str();
}

}  // namespace hetpu
