// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC's final step: the solve that shares out everything left, each PU's share sized to
// end with the others after the work already queued on it, so its finish times are the
// job's end. Each PU takes its share once; the step is re-solved when a PU's speed changes
// or blocks miss their predictions before the shares are taken. With one block per PU the
// job waits for the unluckiest one, so the straggle hedge (HETPU_PLBHAC_HEDGE) gives PUs of
// a noisier kind less of it.
#pragma once

#include <cstdint>
#include <vector>

#include "sched_policies/plbhac/core/plbhac_solve.h"
#include "sched_policies/plbhac/core/plbhac_state.h"

namespace hetpu {

// The PU's block from the final solution: its share the first time it asks, afterwards
// only what no untaken share reserves (0: nothing).
uint64_t plbhac_final_block(PlbhacState &s, PlbhacPuState &pu, uint64_t remaining);

// Re-solves the final step with everything left; every PU takes its new share once.
void plbhac_resolve_final(PlbhacState &s, uint64_t remaining);

// What the final shares not yet taken and the pieces of shares still to hand out add up to.
uint64_t plbhac_reserved_for_final(const PlbhacState &s);

// Each PU's straggle: the spread of the out-of-sample misses of every PU of its kind
// together (0: unknown, fewer than 2 misses in the kind).
std::vector<double> plbhac_straggle_spreads(const PlbhacState &s);

// The hedge's price per PU for a choice k: 1 + k spread.
std::vector<double> plbhac_hedge_scales(double k, const std::vector<double> &spreads);

// The final plan chosen among `plan` (as solved) and plans that price each PU's block
// plbhac_hedge_scales(k) longer, by its expected end under the PUs' misses; notes the k
// chosen in s.hedge_k for the job's later final solves.
PlbhacSolution plbhac_hedge_final(PlbhacState &s, PlbhacSolution plan, const std::vector<PlbhacPu> &input,
                                  const std::vector<double> &caps, const PlbhacSolveOptions &opt);

}  // namespace hetpu
