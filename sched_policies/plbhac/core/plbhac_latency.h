// SPDX-License-Identifier: LGPL-2.1-or-later
// What a PU's blocks cost beyond its fitted models: StarPU's profiling sees a block's
// execution and input transfers, but a job also pays each block's dispatch and completion
// latency, and waits at its end for the last blocks' results to come back to main memory.
// Both are measured per PU from what the runner reports and priced as the median of a
// recent window: a timing spike must not move it, a new level (another load on the node)
// must, once it is most of the window.
#pragma once

#include <vector>

#include "runtime/divisible/core/block_planner.h"
#include "runtime/divisible/core/planner_extensions.h"

namespace hetpu {

struct PlbhacPuState;  // plbhac_pu.h

// The per-block latency a PU is priced at from its recent samples (PlbhacPuMemory::latency):
// their median, 0 without any.
double plbhac_latency_s(std::vector<double> samples);

// Appends `s` to a window of recent samples (oldest first, at most 16) and sets `median`
// to their plbhac_latency_s.
void plbhac_note_recent(std::vector<double> &samples, double &median, double s);

// The block's latency beyond exec + transfer: from when it could start (its submission or
// the end of the PU's previous block, whichever came later; `pu.last_end_s` must not yet
// include this block) to when the planner heard of it. Noted in the PU's window and
// returned; 0 (not noted) when the runner gave no submission time.
double plbhac_note_block_latency(PlbhacPuState &pu, const BlockDone &done);

// Notes the delay of a block's results home when the PU had nothing else in flight after
// it: only then is it the delay a job's last block pays (a block queued behind delays the
// copy back too).
void plbhac_note_results_home(PlbhacPuState &pu, const BlockHome &home);

}  // namespace hetpu
