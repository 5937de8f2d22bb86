// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_measure.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sched_policies/plbhac/core/plbhac_latency.h"
#include "sched_policies/plbhac/core/plbhac_training.h"

namespace hetpu {

namespace {

constexpr double kSurprise = 0.3;  // relative miss that makes a block a surprise (as OnlineModelOptions)

}  // namespace

PlbhacRefit::PlbhacRefit(const PlbhacPuState &pu, const BlockDone &done)
    : worker(pu.info.id), version(pu.models_version), x(static_cast<double>(done.count)), exec_s(done.exec_s),
      transfer_s(done.transfer_s), exec(pu.exec), transfer(pu.transfer)
{}

void PlbhacRefit::run()
{
    if (fits_exec(x, exec_s))
        add_measured(exec, x, exec_s);
    if (fits_transfer(x, transfer_s))
        add_measured(transfer, x, transfer_s);
    ran = true;
}

void plbhac_apply_done(PlbhacState &s, const BlockDone &done, PlbhacRefit *refit,
                       const std::function<void(const PlbhacTraceRecord &)> &on_trace)
{
    PlbhacPuState *pu = s.find(done.worker);
    if (!pu)
        return;
    if (refit && !(refit->ran && refit->worker == pu->info.id && refit->version == pu->models_version &&
                   refit->x == static_cast<double>(done.count) && refit->exec_s == done.exec_s &&
                   refit->transfer_s == done.transfer_s))
        refit = nullptr;
    else if (refit)
        ++s.refits_applied;
    ++pu->models_version;
    PlbhacBlock block;
    if (!pu->outstanding.empty()) {
        block = pu->outstanding.front();
        pu->outstanding.pop_front();
    }
    pu->idle_after = pu->outstanding.empty() ? done.offset : PlbhacPuState::kNoBlock;
    // The block as the planner would price it now, before its models learn it: an
    // out-of-sample miss for the straggle hedge. Not a probe's, nor a small gap block's
    // (see `judged` below): sized away from the PU's regular blocks, they miss by misfit.
    // The blocks a PU takes while waiting for the training synchronisation count (its
    // models are fitted on its two training blocks by then): a short job's first solve is
    // often its final one, and without them its kinds' spreads would be unknown there.
    const bool regular = block.phase != "gap" && block.phase != "probe";
    const double x = static_cast<double>(done.count);
    const double priced =
        (s.trained || pu->training_done >= 2) && pu->exec.ready() && done.count > 0 && (regular || x >= pu->fit_hi / 8)
            ? plbhac_predict(*pu, done.count)
            : 0.0;
    const double profiled = done.exec_s + done.transfer_s;
    const double latency = plbhac_note_block_latency(*pu, done);
    const double measured = profiled + latency;
    const double fit_hi_before = pu->fit_hi;  // the model's largest size before this block
    if (done.count > 0 && measured > 0 && std::isfinite(measured) && block.phase != "probe")
        pu->measured.emplace_back(static_cast<double>(done.count), measured);
    pu->last_end_s = std::max(pu->last_end_s, done.end_s);
    s.now_s = std::max(s.now_s, done.end_s);
    if (priced > 0 && measured > 0 && std::isfinite(measured) && std::isfinite(priced))
        pu->note_miss(std::log(measured / priced));
    if (done.count > 0) {
        pu->size_lo = pu->size_lo > 0 ? std::min(pu->size_lo, x) : x;
        pu->size_hi = std::max(pu->size_hi, x);
    }
    if (PlbhacRefit::fits_exec(x, done.exec_s)) {
        const size_t before = pu->exec.size();
        if (refit)
            std::swap(pu->exec, refit->exec);  // the old model is freed with the refit, outside the lock
        else
            PlbhacRefit::add_measured(pu->exec, x, done.exec_s);
        pu->note_fit_range();
        // The model drops its history only when it accepts a new regime. Its measured
        // range is then that of the new run alone: plbhac_narrow and the trust region must
        // see it, not the range of the dropped history.
        if (pu->exec.size() < before) {
            pu->regime_changed = true;
            pu->measured.clear();
            pu->saved_blocks.clear();
            pu->size_lo = pu->fit_lo;  // note_fit_range above: the restarted model's points
            pu->size_hi = pu->fit_hi;
        } else if (pu->exec.size() > before + 1) {
            // The model undid a regime change (a transient, see OnlineTimeModel): the sizes
            // of the history it restored are measured again.
            pu->size_lo = std::min(pu->size_lo, pu->fit_lo);
            pu->size_hi = std::max(pu->size_hi, pu->fit_hi);
        }
        // The surprise hedge. The model is rightly slow to believe one surprising block (a
        // timing spike must not move it), but with two blocks queued per PU the next block
        // is already sized when this one reports, so a PU slowed by a competing process
        // would run more blocks sized for its old speed before the model accepts the
        // change. So while the model, refitted with this block, still misses it by more
        // than kSurprise, the PU's predictions are scaled by the miss and it re-solves
        // before its next block: a spike costs one block sized for a slower PU, a real
        // change is acted on at once and handed back to the model when it adapts. The miss
        // is measured against what the planner predicts (proportional while plbhac_narrow),
        // not the raw curve. Gap and probe blocks under an eighth of the largest size the
        // model was fitted on are not judged: they lie where the curve is least sure, and a
        // real change of speed shows on the next regular block.
        const bool judged = regular || x >= fit_hi_before / 8;
        if (s.trained && pu->exec.ready() && judged) {
            const double expected = plbhac_narrow(*pu) ? pu->exec.predict(plbhac_anchor(*pu)) * x / plbhac_anchor(*pu)
                                                       : pu->exec.predict(x);
            const double r = done.exec_s / std::max(expected, 1e-12);
            const double scale = (r > 1.0 + kSurprise || r < 1.0 / (1.0 + kSurprise)) ? r : 1.0;
            if (scale != pu->surprise_scale) {
                pu->surprise_scale = scale;
                pu->regime_changed = true;
            }
        }
    }
    if (PlbhacRefit::fits_transfer(x, done.transfer_s)) {
        if (refit)
            std::swap(pu->transfer, refit->transfer);
        else
            PlbhacRefit::add_measured(pu->transfer, x, done.transfer_s);
    }
    ++s.measurements_since_solve;
    if (block.predicted_s > 0 && block.phase != "probe")
        s.miss_since_solve_s = std::max(s.miss_since_solve_s, std::abs(measured - block.predicted_s));

    if (!s.trained) {
        plbhac_training_done(s, *pu, done.worker, measured);
    } else if (block.phase != "probe" && block.predicted_s - measured > s.options.gap_threshold_s) {
        // (A probe is not part of a step's plan: its finishing early leaves no gap.)
        pu->pending_gap_s = block.predicted_s - measured;
    }

    if (on_trace)
        on_trace({done.end_s, done.worker, pu->info.name, done.count, block.predicted_s, measured, block.phase,
                  block.step, pu->latency_s, pu->home_delay_s, done.exec_s, done.transfer_s, latency});
}

}  // namespace hetpu
