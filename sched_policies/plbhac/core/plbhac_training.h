// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC's training phase (paper section 3.1; docs/design.md, PLB-HAC training block
// (erratum)): every PU gets x_init, the first to finish 2 x_init, every other PU p
// 2 x_init R with R = t_fastest / t_p, so the second blocks end close together and every
// PU has two sizes to fit its models on. The phase ends at the planner's one
// synchronisation, when every PU has finished both; a PU that is done first keeps taking
// doubling blocks meanwhile instead of idling.
#pragma once

#include <cstdint>

#include "sched_policies/plbhac/core/plbhac_state.h"

namespace hetpu {

// The training block: options.x_init, or 1/32 of the job per PU, rounded to the granule and
// at least the job's minimum block.
uint64_t plbhac_x_init(const BlockRules &rules, const PlbhacOptions &options, size_t pus);

// The PU's next block while the planner is training (0: its training block is still
// running, or a waiting block would outlast the job).
uint64_t plbhac_training_block(PlbhacState &s, PlbhacPuState &pu, uint64_t remaining);

// Records a completed training-phase block that measured `measured` seconds; ends the
// training (s.trained) when every PU has completed two.
void plbhac_training_done(PlbhacState &s, PlbhacPuState &pu, int worker, double measured);

// The smallest share of the job the blocks measured so far allow a PU: its best throughput
// over the largest throughput every PU might have.
double plbhac_least_share(const PlbhacState &s, const PlbhacPuState &pu);

// Seconds from now until `remaining` would be done by the PUs with a measured block alone,
// each at its best measured throughput once its queue drains: an upper bound on the job's
// end while some PUs are still unmeasured. 0 when no PU has been measured. `without`: a PU
// left out; PUs that declined to train (PlbhacPuState::declined) are left out too.
double plbhac_measured_end_s(const PlbhacState &s, uint64_t remaining, const PlbhacPuState *without = nullptr);

// The guarantee against slow units (docs/design.md, "PLB-HAC: units not worth training"):
// whether a PU that has measured one training block can no longer shorten the job: even its
// smallest block, priced in proportion to that measurement (a lower bound where blocks have
// a fixed cost), would end after the other measured PUs have done everything left.
bool plbhac_cannot_help(const PlbhacState &s, const PlbhacPuState &pu, uint64_t remaining);

}  // namespace hetpu
