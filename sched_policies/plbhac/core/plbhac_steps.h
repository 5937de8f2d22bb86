// SPDX-License-Identifier: LGPL-2.1-or-later
// How much of the job each virtual step of PLB-HAC's execution phase shares out (paper
// section 3.2, Algorithm 1). More steps correct the models more often; each step costs
// every PU a block's fixed cost (launch, transfer set-up) and a solve. So the step count
// (HETPU_PLBHAC_STEPS, HETPU_PLBHAC_WARM_STEPS) is cut for a job too short for it
// (HETPU_PLBHAC_MIN_STEP_MS) and for PUs whose measured blocks show a fixed cost
// (HETPU_PLBHAC_STEP_ERROR, HETPU_PLBHAC_MIN_STEPS), and the tail (HETPU_PLBHAC_TAIL,
// HETPU_PLBHAC_ALPHA) shrinks the steps so the PUs finish together. A PU whose blocks get
// dearer per element past some size is held at that size (plbhac_efficient_size).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sched_policies/plbhac/core/plbhac_state.h"

namespace hetpu {

// Elements to share out at virtual step `step` with `remaining` left, before the final
// rules of plbhac_solve_step: sets the step size at the first solve, enlarges it when fewer
// steps pay (plbhac_overhead_steps), and shrinks it in the tail (which it notes the start
// of).
uint64_t plbhac_step_workload(PlbhacState &s, unsigned step, uint64_t remaining);

// Steps for the rest of the job when the PUs pay a fixed cost per block: `steps`, or fewer
// (at least options.min_steps, unless those would cost over a quarter of the time left).
unsigned plbhac_overhead_steps(const PlbhacState &s, unsigned steps, uint64_t remaining);

// A PU's fixed cost per block, from its measured blocks (its saved ones for a warm start
// until it has enough of its own); -1 when it cannot be read (too few sizes).
double plbhac_fixed_cost(const PlbhacPuState &pu);
// The intercept of a least-squares line through `blocks` (size, seconds) of at least a
// 1/window of the largest size, lowered by a standard error; -1 when too few or too close.
double plbhac_fixed_cost_of(const std::vector<std::pair<double, double>> &blocks, double window);

// The block size past which a PU has been measured slower per element, by more than timing
// noise explains (0: none); blocks shorter than a quarter of min_step_s are no evidence.
double plbhac_efficient_size(const PlbhacPuState &pu, double min_step_s);

// Elements per second at the PU's largest measured block (or its efficient size when held);
// 0 when it has none or the prediction there is unusable.
double plbhac_measured_rate(const PlbhacPuState &pu);
// Seconds for `w` elements if every PU ran at its measured rate (0 when none is known).
double plbhac_ideal_seconds(const PlbhacState &s, uint64_t w);
// Seconds from now until what is left would be done if it were shared so that every PU
// ends at the same time, each starting when its queue drains and running at its measured
// rate (0 when a PU has none).
double plbhac_common_end_s(const PlbhacState &s, uint64_t remaining);

}  // namespace hetpu
