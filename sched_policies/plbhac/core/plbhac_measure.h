// SPDX-License-Identifier: LGPL-2.1-or-later
// What PLB-HAC learns from a completed block: its models are refitted with it, the block's
// miss against its prediction feeds the surprise hedge, the straggle hedge and the gap
// blocks, and its latency and the training's progress are noted. A refit (a curve choice,
// about a millisecond) can be prepared on the worker's own thread (PlbhacRefit) and handed
// over under the runner's lock, so that PUs whose blocks end together do not wait for each
// other's fits.
#pragma once

#include <cstdint>
#include <functional>

#include "perfmodels/core/online_model.h"
#include "perfmodels/core/transfer_model.h"
#include "runtime/divisible/core/planner_extensions.h"
#include "sched_policies/plbhac/core/plbhac_state.h"
#include "sched_policies/plbhac/core/plbhac_trace.h"

namespace hetpu {

// Copies of a PU's models and the block to fit them with.
class PlbhacRefit final : public PuRefit {
public:
    PlbhacRefit(const PlbhacPuState &pu, const BlockDone &done);
    void run() override;  // the same adds as plbhac_apply_done's, on the copies

    static bool fits_exec(double x, double exec_s) { return exec_s > 0 && x > 0; }
    static bool fits_transfer(double x, double transfer_s) { return x > 0 && transfer_s >= 0; }
    // An invalid time (an infinite one from a broken clock) throws before the model
    // changes: it keeps its last fit.
    template <typename Model> static void add_measured(Model &model, double x, double seconds)
    {
        try {
            model.add(x, seconds);
        } catch (const std::invalid_argument &) {
        }
    }

    const int worker;
    const uint64_t version;
    const double x, exec_s, transfer_s;
    OnlineTimeModel exec;
    LinearTransferModel transfer;
    bool ran = false;
};

// Learns `done`; `refit` (may be null) is used when it was run for this block on the PU's
// models as they are now, else the models are refitted here (they end the same either
// way). Calls `on_trace` (when set) with the block's record.
void plbhac_apply_done(PlbhacState &s, const BlockDone &done, PlbhacRefit *refit,
                       const std::function<void(const PlbhacTraceRecord &)> &on_trace);

}  // namespace hetpu
