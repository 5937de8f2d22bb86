// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_execution.h"

#include <algorithm>

#include "sched_policies/plbhac/core/plbhac_final.h"
#include "sched_policies/plbhac/core/plbhac_step_solve.h"
#include "sched_policies/plbhac/core/plbhac_steps.h"
#include "sched_policies/plbhac/core/plbhac_trust.h"

namespace hetpu {

namespace {

constexpr double kReshareMiss = 0.01;  // see plbhac_regular_block
constexpr size_t kReshareEvery = 16;   // see plbhac_regular_block

}  // namespace

uint64_t plbhac_regular_block(PlbhacState &s, PlbhacPuState &pu, uint64_t remaining)
{
    // A PU whose speed changed after the final solve would otherwise run a final share
    // sized for its old speed while the others idle at the end: its surprise re-solves the
    // final step with every share not yet taken.
    // Likewise without a surprise: the final shares are sized when the first PU enters the
    // final step, from predictions of every other PU's queue that reach seconds ahead. A
    // completion that missed its prediction by more than kReshareMiss of the time run so
    // far moves that PU's end by as much, so a PU about to take its share re-solves first;
    // smaller misses are not worth a solve. A re-share solves for every PU, under the lock
    // every completion waits for, and among a thousand PUs one misses at nearly every
    // completion: at most one per kReshareEvery-th of the PUs reporting keeps its cost per
    // completion bounded.
    const bool reshare = s.options.reshare_final && !pu.final_taken && s.miss_since_solve_s > kReshareMiss * s.now_s &&
                         kReshareEvery * s.measurements_since_solve >= s.pus.size();
    // Work added after the final solve (on a multi-rank run, a range another rank handed
    // over) is shared among the PUs as the final step is, not handed whole to the first PU
    // that asks. Rounding leaves at most a granule per PU unreserved: that goes as before.
    const bool grown = s.final_solved && remaining > plbhac_reserved_for_final(s) + s.rules.min_block * s.pus.size();
    if (s.final_solved && (pu.regime_changed || reshare || grown)) {
        pu.regime_changed = false;
        plbhac_resolve_final(s, remaining);
    }
    if (s.final_solved)
        return plbhac_final_block(s, pu, remaining);
    // While a PU's queued block reaches beyond the sizes it has run, its next block waits
    // for that block's measurement: the trust region grows a PU's blocks from what it has
    // measured, so a block sized while the previous one is unmeasured grows only from the
    // one before, and every extra ramp block pays the PU's fixed per-block cost.
    if (s.options.trust > 0)
        for (const PlbhacBlock &o : pu.outstanding)
            if (static_cast<double>(o.size) > pu.size_hi)
                return 0;
    const unsigned step = pu.step + 1;
    // The first PU to enter a step re-solves (plbhac_solve_step skips the solver when
    // nothing changed); the others use the latest solution without waiting. One exception:
    // a PU whose model has just restarted (its speed changed) re-solves the current step
    // before taking its next block, or it would get one more block sized for its old speed
    // (paper Fig. 6).
    if (step > s.solved_step)
        plbhac_solve_step(s, step, remaining);
    else if (pu.regime_changed)
        plbhac_solve_step(s, s.solved_step, remaining);
    pu.regime_changed = false;
    if (s.final_solved)
        return plbhac_final_block(s, pu, remaining);
    const size_t i = pu.index;
    uint64_t size = std::min(s.solution[i], remaining);
    // A step's block that keeps this PU busy past the time at which the whole job could end
    // (what is left shared so that every PU ends together after its queue) commits it to
    // work the others will be idle for: that step becomes the final one, everything left
    // shared counting every PU's queue.
    if (s.options.final_past_end && size > 0 && size < remaining) {
        const double end = plbhac_common_end_s(s, remaining);
        if (end > 0 && plbhac_ready_in(pu, s.now_s) + plbhac_predict(pu, size) > end) {
            plbhac_resolve_final(s, remaining);
            if (s.final_solved)
                return plbhac_final_block(s, pu, remaining);
            size = std::min(s.solution[i], remaining);  // the solve failed: the last solution
        }
    }
    if (size == 0)
        return plbhac_probe_block(s, pu, remaining);  // left out of this step
    pu.step = step;
    const bool tail = s.tail_start_step && step >= s.tail_start_step;
    return plbhac_hand_out(s, pu, size, {0, 0, tail ? "tail" : "execution", step});
}

// Capped at the PU's regular block: a gap block sized from a model that has just been
// proven wrong (the PU finished early) must not become the largest block of the run.
uint64_t plbhac_gap_block(PlbhacState &s, PlbhacPuState &pu, uint64_t remaining)
{
    const double gap = pu.pending_gap_s;
    pu.pending_gap_s = 0;
    const size_t i = pu.index;
    uint64_t size = std::min({plbhac_largest_block_within(pu, gap, s.rules), remaining, s.solution[i]});
    if (size < pu.min_block)
        return 0;
    pu.outstanding.push_back({size, plbhac_predict(pu, size), "gap", pu.step});
    return size;
}

// A PU the solve leaves out gets no blocks, hence no new measurements: a model that
// excludes it wrongly (after a slowdown, a model restarted from a few slow blocks of one
// size may predict the same time for every size) would stay wrong for the rest of the run.
// A minimum block per step costs little, and a point far from the sizes already measured
// shows the next solve how the PU's time scales. The PU is asked again after every
// completion, so it is never forgotten.
uint64_t plbhac_probe_block(PlbhacState &s, PlbhacPuState &pu, uint64_t remaining)
{
    if (!pu.outstanding.empty() || s.tail_start_step || s.final_solved || pu.probe_step == s.solved_step)
        return 0;
    pu.probe_step = s.solved_step;
    const uint64_t size = std::min(pu.min_block, remaining);
    // A probe that would outlast the job ends it late: a PU whose smallest block takes
    // longer than the rest of the job is not measured again in that job.
    if (plbhac_predict(pu, size) > plbhac_common_end_s(s, remaining))
        return 0;
    pu.outstanding.push_back({size, plbhac_predict(pu, size), "probe", pu.step});
    return size;
}

uint64_t plbhac_hand_out(PlbhacState &s, PlbhacPuState &pu, uint64_t size, PlbhacBlock block)
{
    if (pu.held > 0 && static_cast<double>(size) > pu.held) {
        const uint64_t piece = std::max(s.round_block(static_cast<uint64_t>(pu.held)), pu.min_block);
        if (piece < size) {
            pu.share_left = size - piece;
            s.reserved_known = false;
            pu.share_block = block;
            size = piece;
        }
    }
    block.size = size;
    block.predicted_s = plbhac_predict(pu, size);
    pu.outstanding.push_back(block);
    return size;
}

}  // namespace hetpu
