// SPDX-License-Identifier: LGPL-2.1-or-later
// One processing unit as PLB-HAC sees it: its fitted models, the blocks it has queued and
// measured, and what it pays beyond the models; and how a block on it is priced from
// those. Every other part of the planner reads PUs through these functions, so that a
// block is priced the same way wherever it is sized.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "perfmodels/core/online_model.h"
#include "perfmodels/core/transfer_model.h"
#include "runtime/divisible/core/block_planner.h"
#include "sched_policies/plbhac/core/plbhac_latency.h"

namespace hetpu {

// A block handed to a PU and not yet completed. Blocks of one PU run in the order they
// were assigned (StarPU's per-worker queue is FIFO), so completions are matched to the
// front of the PU's list.
struct PlbhacBlock {
    uint64_t size = 0;
    double predicted_s = 0;
    std::string phase;  // "training", "execution", "gap", "tail", "probe"
    unsigned step = 0;
};

struct PlbhacPuState {
    PlannerWorker info;
    size_t index = 0;  // position in the planner's PUs (and its solution)
    OnlineTimeModel exec;
    LinearTransferModel transfer;
    uint64_t min_block = 1;
    unsigned training_assigned = 0;
    unsigned training_done = 0;
    double first_training_s = 0;
    uint64_t training_sizes[2] = {0, 0};
    unsigned step = 0;                // virtual step of its latest regular block
    double pending_gap_s = 0;         // slack to fill with an extra block
    bool regime_changed = false;      // its model restarted since its last regular block
    unsigned probe_step = 0;          // solved step of its latest probe block (plbhac_probe_block)
    double size_lo = 0, size_hi = 0;  // smallest and largest measured block (see plbhac_narrow)
    double fit_lo = 0, fit_hi = 0;    // smallest and largest size its execution model holds now
    void note_fit_range();
    double last_end_s = 0;  // completion time of its latest block
    // Counts the blocks its models were given: a refit prepared from an older version
    // (plbhac_measure.h) is stale and not applied.
    uint64_t models_version = 0;
    // Hedge against a surprise the model has not (yet) accepted: the ratio measured /
    // predicted of the latest block when it missed by more than the surprise threshold,
    // else 1 (plbhac_apply_done).
    double surprise_scale = 1.0;
    bool final_taken = false;   // took its share of the final solve (plbhac_final_block)
    uint64_t waiting_size = 0;  // latest block taken while waiting for the synchronisation
    bool declined = false;      // its second training block was declined: it cannot help (plbhac_cannot_help)
    // Measured blocks (size, exec + transfer + latency seconds) since its model last
    // restarted: the fixed cost per block is read off them (plbhac_fixed_cost), not off the
    // fitted curve.
    std::vector<std::pair<double, double>> measured;
    // A warm start's saved blocks, priced the same way (plbhac_warm_start): read for the
    // fixed cost and the trust factor only while this run's own blocks cannot give them.
    std::vector<std::pair<double, double>> saved_blocks;
    std::deque<PlbhacBlock> outstanding;
    // Its efficient size when its blocks get dearer per element past it (plbhac_efficient_size,
    // read at each solve, never lowered; 0: none). Its share of a step is then handed out
    // in blocks of at most that size: share_left is what it has still to take of it.
    double held = 0;
    uint64_t share_left = 0;
    PlbhacBlock share_block;  // step and phase of the blocks of that share
    // Its recent per-block latencies beyond exec + transfer, oldest first, and their median:
    // what every block of it is priced at on top of its models (plbhac_latency.h).
    std::vector<double> latencies;
    double latency_s = 0;
    void note_latency(double s) { plbhac_note_recent(latencies, latency_s, s); }
    // Its recent delays from a block's end to its results being back in main memory,
    // oldest first, and their median: what its last block of a job is priced at on top of
    // everything else, because the job ends only when they are home.
    std::vector<double> home_delays;
    double home_delay_s = 0;
    void note_home_delay(double s) { plbhac_note_recent(home_delays, home_delay_s, s); }
    // Its recent misses, log(measured / predicted), each block predicted by the models as
    // they were before they learnt it (out of sample), oldest first: what the straggle
    // hedge reads its kind's spread off (plbhac_straggle_spreads).
    std::vector<double> misses;
    void note_miss(double m);
    // Offset of the block whose end left it with nothing in flight (kNoBlock: none since):
    // only such a block's delay home is the one a job's last block pays.
    static constexpr uint64_t kNoBlock = UINT64_MAX;
    uint64_t idle_after = kNoBlock;
};

// Whether two block sizes are too close for a line through them to show a slope.
bool plbhac_too_close(double a, double b);

// Whether the PU's measured sizes, or the sizes its model is fitted on now, are too close
// to show a slope: its time is then taken as proportional to the size, through the model
// at plbhac_anchor.
bool plbhac_narrow(const PlbhacPuState &pu);
// Where a narrow PU's proportional time is anchored: its model's largest size.
double plbhac_anchor(const PlbhacPuState &pu);
// The models' time for x elements, exec scaled by the surprise hedge, plus transfer.
double plbhac_model_time(const PlbhacPuState &pu, double x);
// Seconds a block of x elements takes on the PU: models (proportional while narrow) plus
// its per-block latency.
double plbhac_predict(const PlbhacPuState &pu, uint64_t x);
// Seconds from `now_s` until the PU drains the blocks already queued on it, priced by its
// current models.
double plbhac_ready_in(const PlbhacPuState &pu, double now_s);
// The PU's best measured throughput, elements per second (0 before its first block).
double plbhac_best_rate(const PlbhacPuState &pu);
// Seconds from `now_s` until the PU's queue drains at `rate` (training blocks carry no
// prediction yet).
double plbhac_free_in(const PlbhacPuState &pu, double rate, double now_s);

// Seconds from now until `work` elements are done by units that each start when free (the
// pair's first, seconds from now) and then process the pair's second, elements per second:
// water-filling over the units in the order they become free. 0 without units.
double plbhac_water_filled_end(std::vector<std::pair<double, double>> free_rate, double work);

}  // namespace hetpu
