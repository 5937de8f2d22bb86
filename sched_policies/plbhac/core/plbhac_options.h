// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC's settings, apart from the planner so that the StarPU glue, `hetpu sim` and the
// tests can build and check them without a planner; each field names the HETPU_PLBHAC_*
// variable that sets it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "sched_policies/plbhac/core/plbhac_solve.h"

namespace hetpu {

struct PlbhacMemory;  // plbhac_warm_start.h

struct PlbhacOptions {
    uint64_t x_init = 0;           // training block; 0: the job's min block scaled (plbhac_x_init)
    double gap_threshold_s = 0.4;  // HETPU_PLBHAC_GAP_MS (paper: 400 ms)
    double tail_fraction = 0.7;    // HETPU_PLBHAC_TAIL (paper: 70%)
    double alpha = 0.1;            // HETPU_PLBHAC_ALPHA (paper: 0.1)
    unsigned steps = 8;            // HETPU_PLBHAC_STEPS: virtual steps the post-training data is cut into
    // HETPU_PLBHAC_TRUST: a solve sizes a PU's block at most this many times the largest
    // block it has run (its model is an extrapolation beyond; plbhac_trust.h), squared while
    // its time has hardly grown with its size (plbhac_trust_of). 0: no cap.
    double trust = 4.0;
    // HETPU_PLBHAC_WARM_STEPS: virtual steps for a planner that starts from saved models
    // (memory). Fewer steps cost fewer per-block overheads on a stable node, but larger
    // blocks react later to a change. Default: as cold.
    unsigned warm_steps = 8;
    // HETPU_PLBHAC_MIN_STEP_MS: fewer steps when the job is too short for them: at most
    // one step per min_step_s of the job's estimated length (0: always the step count).
    double min_step_s = 0.2;
    // HETPU_PLBHAC_STEP_ERROR: fewer steps for a job whose accelerators pay a fixed cost per
    // block, read off the PUs' measured blocks at every step before the tail
    // (plbhac_overhead_steps): steps left = sqrt(step_error T / c), T the estimated time
    // left, c the throughput-weighted fixed cost, between HETPU_PLBHAC_MIN_STEPS (min_steps;
    // fewer when min_steps fixed costs would take over a quarter of T) and the steps left as
    // planned. 0: always the step count.
    double step_error = 0.1;
    unsigned min_steps = 4;
    uint64_t accel_min_block = 0;  // minimum block on GPUs/accelerators (0: the job's minimum)
    // HETPU_PLBHAC_ALIGN: each final solve equalises absolute finish times, counting the
    // work still queued on every PU (plbhac_solve_step); 0 gives the paper's equal block
    // durations.
    bool align_finish = true;
    // The final solve comes as soon as a step's block would keep its PU busy past the time
    // at which the whole job could end (plbhac_regular_block), not only when what is left is
    // under a step and a half. Off: the paper's step count alone decides (tests compare).
    bool final_past_end = true;
    // A PU about to take its final share re-solves the final step first when blocks have
    // been measured since (plbhac_regular_block). Off: only a surprise re-solves it.
    bool reshare_final = true;
    // HETPU_PLBHAC_HEDGE: the final solve, whose blocks end the job, weighs each PU's
    // share against the straggle of its kind (the spread of its blocks' out-of-sample
    // misses): among plans that give noisier PUs less, it takes the one whose expected end
    // under those misses is earliest (plbhac_hedge_final). Off: the shares end together as
    // predicted.
    bool hedge_straggle = true;
    // HETPU_PLBHAC_SOLVER: who solves each step's system (plbhac_solve.h): auto or ipopt.
    PlbhacSolver solver = PlbhacSolver::Auto;
    // Read when the planner is built (a warm start when it holds a model for every worker)
    // and overwritten with the planner's models when it is destroyed (when it finished
    // training, was warm-started, or every PU measured a block). Null: none.
    std::shared_ptr<PlbhacMemory> memory;
    // Called by the destructor with what this planner learnt (as `memory` above): the
    // StarPU glue and `hetpu sim --models` save it to disk (plbhac_model_store.h). Must not
    // throw.
    std::function<void(const PlbhacMemory &)> on_learnt;
};

// Reads HETPU_PLBHAC_* through `lookup` (process_env in the glue, a map in tests) into `opt`;
// throws PlbhacInputError naming the bad variable and a valid example (`opt` unchanged then).
void plbhac_options_from_env(PlbhacOptions &opt, const std::function<const char *(const char *)> &lookup);

}  // namespace hetpu
