// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC's trust region (HETPU_PLBHAC_TRUST): no PU gets a block beyond `trust` times the
// largest size it has been measured at, because past that its model is an extrapolation,
// and the equal-finish solve turns one PU's extrapolation error into every other PU's
// block (a GPU that looks slow on training blocks would leave the CPUs overcommitted).
// Step sizes then grow geometrically while the models learn, and the cap stops binding
// once every PU has run blocks of its share's size.
#pragma once

#include <cstdint>

#include "sched_policies/plbhac/core/plbhac_state.h"

namespace hetpu {

// The trust region's factor for this PU: `trust`, squared while its time has hardly grown
// with its size (a fixed cost still dominates its blocks).
double plbhac_trust_of(const PlbhacPuState &pu, double trust);

// How far a block reaches beyond the PU's trust region: its ratio to the trust factor
// times the PU's largest measured size (<= 1: inside; 0 without a trust region, for blocks
// of its minimum size and for a held PU).
double plbhac_trust_ratio(const PlbhacPuState &pu, uint64_t block, double trust);

// How far s.solution reaches beyond the trust region: the largest plbhac_trust_ratio.
double plbhac_trust_excess(const PlbhacState &s);

// The largest block (a granule multiple) the PU is predicted to run within `seconds`.
uint64_t plbhac_largest_block_within(const PlbhacPuState &pu, double seconds, const BlockRules &rules);

}  // namespace hetpu
