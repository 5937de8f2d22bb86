// SPDX-License-Identifier: LGPL-2.1-or-later
// One virtual step's solve (paper section 3.2, system (3)): the PUs' fitted models become
// the solver's time curves (plbhac_solve.h), and the step's workload is shared so that the
// PUs' blocks end together, within the trust region (plbhac_trust.h). Only the first PU to
// enter a step solves it (Algorithm 1); the others take the latest solution without
// waiting. A failed solve keeps the run going on the previous solution.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sched_policies/plbhac/core/plbhac_solve.h"
#include "sched_policies/plbhac/core/plbhac_state.h"
#include "sched_policies/plbhac/core/plbhac_time_curve.h"

namespace hetpu {

// Solves virtual step `step` with `remaining` elements left into s.solution (everything
// left when it is the final step, see plbhac_final.h).
void plbhac_solve_step(PlbhacState &s, unsigned step, uint64_t remaining);

// The solver's view of every PU: its fitted curves (proportional ones while plbhac_narrow),
// its minimum block and, when `align`, the work queued on it and the delay of its results
// home. caps[i] > 0 makes PU i's curve steep past caps[i] elements; `scales` (the straggle
// hedge's) prices PU i's blocks scales[i] times longer. The curves live in `curves` and must
// outlive the solve.
std::vector<PlbhacPu> plbhac_solver_input(const PlbhacState &s, bool align, const std::vector<double> &caps,
                                          std::vector<std::unique_ptr<TimeCurve>> &curves,
                                          const std::vector<double> *scales = nullptr);

// The fallback when the first solve fails: shares proportional to each PU's measured
// throughput at the largest size it has run, within the trust region.
void plbhac_split_by_rates(PlbhacState &s, uint64_t w);

}  // namespace hetpu
