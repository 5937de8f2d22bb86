// SPDX-License-Identifier: LGPL-2.1-or-later
// The blocks of PLB-HAC's execution phase (paper sections 3.2-3.3): a PU's k-th regular
// block belongs to virtual step k and is its share of that step's solution; a PU that
// finished a block earlier than predicted by more than HETPU_PLBHAC_GAP_MS gets a gap block
// to fill that slack; a PU the solve leaves out gets a probe block of its minimum size per
// step, so that its model keeps being measured and corrected.
#pragma once

#include <cstdint>

#include "sched_policies/plbhac/core/plbhac_state.h"

namespace hetpu {

// The PU's next block of the execution phase, solving the next step first when it is the
// first PU to enter it (0: nothing for it now).
uint64_t plbhac_regular_block(PlbhacState &s, PlbhacPuState &pu, uint64_t remaining);

// A block that fills the PU's pending gap, at most its regular block (0: none fits).
uint64_t plbhac_gap_block(PlbhacState &s, PlbhacPuState &pu, uint64_t remaining);

// A minimum block for an idle PU the solve left out, once per solved step, outside the tail
// (0: none).
uint64_t plbhac_probe_block(PlbhacState &s, PlbhacPuState &pu, uint64_t remaining);

// Hands `size` elements of a share to the PU as its next block, or the first block of
// them when it is held at a smaller efficient size (the rest is its share_left).
uint64_t plbhac_hand_out(PlbhacState &s, PlbhacPuState &pu, uint64_t size, PlbhacBlock block);

}  // namespace hetpu
