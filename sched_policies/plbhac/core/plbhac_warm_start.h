// SPDX-License-Identifier: LGPL-2.1-or-later
// What a PLB-HAC planner learnt about its PUs, handed to the next planner of the same job:
// an iterative application runs one divisible job per iteration (k-means' assignment
// pass), and without it every iteration would start with a training phase and models
// fitted from nothing. With it the next job starts in the execution phase with every model
// it had (PlbhacOptions::memory, saved to disk by plbhac_model_store.h).
#pragma once

#include <vector>

#include "perfmodels/core/online_model.h"
#include "perfmodels/core/transfer_model.h"
#include "sched_policies/plbhac/core/plbhac_state.h"

namespace hetpu {

struct PlbhacPuMemory {
    int worker = -1;
    OnlineTimeModel exec;
    LinearTransferModel transfer;
    double size_lo = 0, size_hi = 0;
    std::vector<double> latency;  // recent per-block latencies the profiling missed, oldest first (plbhac_latency.h)
    std::vector<double> home;     // recent delays from a block's end to its results in main memory
    std::vector<double> misses;   // recent log(measured / predicted) of its blocks, out of sample (straggle hedge)
};
struct PlbhacMemory {
    std::vector<PlbhacPuMemory> pus;
};

// Starts the planner from s.options.memory when it holds a model, from at least one
// measured block, for every PU (s.trained and s.warm_started then); else leaves it cold.
void plbhac_warm_start(PlbhacState &s);

// What the planner learnt, into `m`: false (m untouched) when it has nothing worth handing
// on (still training and some PU never measured a block).
bool plbhac_learnt(const PlbhacState &s, PlbhacMemory &m);

}  // namespace hetpu
