// SPDX-License-Identifier: LGPL-2.1-or-later
// What PLB-HAC did, one record per completed block: the planner hands it to its on_trace
// callback, and HETPU_TRACE and `hetpu sim --plan-trace` write it as a JSON line, so that a
// run's plan can be read and compared without the planner.
#pragma once

#include <cstdint>
#include <string>

namespace hetpu {

// One line of "what the scheduler did", written when a block completes.
struct PlbhacTraceRecord {
    double time_s = 0;  // completion, seconds since the run started
    int worker = -1;
    std::string worker_name;
    uint64_t size = 0;
    double predicted_s = 0;  // model prediction when assigned (0 in training)
    double measured_s = 0;   // exec + transfer
    std::string phase;       // "training", "execution", "gap", "tail", "probe"; "ladder", "backup" (plbhac_ladder.h)
    unsigned step = 0;       // virtual step (0: training)
    // What the PU's blocks are priced at beyond the models, after this block: its per-block
    // latency and the delay of its results home before a job can end (plbhac_latency.h).
    double latency_s = 0;
    double home_delay_s = 0;
    // The block's own parts of measured_s: what StarPU's profiling saw (execution, and
    // input transfers inside the task's data acquisition), and the rest until the planner
    // heard of it (its latency sample; transfers prefetched before the task started land
    // here too).
    double exec_s = 0;
    double transfer_s = 0;
    double unseen_s = 0;
};

// The record as one JSON line (no newline): what HETPU_TRACE and `hetpu sim --plan-trace` write.
std::string plbhac_trace_json(const PlbhacTraceRecord &r);

}  // namespace hetpu
