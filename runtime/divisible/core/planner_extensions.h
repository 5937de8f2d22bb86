// SPDX-License-Identifier: LGPL-2.1-or-later
// Completion hooks a BlockPlanner may offer beyond its interface, found through
// BlockPlanner::extensions(). Only planners that refit models per unit need them (PLB-HAC);
// keeping them here keeps BlockPlanner to what every planner implements.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/divisible/core/block_planner.h"
#include "runtime/divisible/core/unit_queues.h"

namespace hetpu {

// A block's written data are valid in main memory again, `home_s` seconds after the run
// started; `end_s` is its BlockDone's. With an accelerator the two differ by the copy back
// (and whatever delays its completion), which the job's end waits for but no profiling
// of the task shows.
struct BlockHome {
    int worker = -1;
    uint64_t offset = 0;
    uint64_t count = 0;
    double end_s = 0;
    double home_s = 0;
};

// The part of a completion that concerns only the PU that ran the block (refitting its
// models), which a runner may do without its lock: see PlannerExtensions::prepare_refit.
class PuRefit {
public:
    virtual ~PuRefit() = default;
    // Touches only this object: safe concurrently with anything the planner does.
    virtual void run() = 0;
};

class PlannerExtensions {
public:
    virtual ~PlannerExtensions() = default;

    // A runner that plans every completion under one lock (the StarPU glue does) makes
    // the workers whose blocks end together wait for each other's planning. The work of
    // a completion that touches only its own PU's models can instead run outside the lock,
    // on the worker's own thread: prepare_refit() (under the lock, cheap) takes what that
    // needs, the runner calls run() on it without the lock, and block_done_refitted()
    // (under the lock) takes its result and does the rest of BlockPlanner::block_done().
    // The outcome is block_done()'s. Null: nothing to prepare; block_done() does it all.
    virtual std::unique_ptr<PuRefit> prepare_refit(const BlockDone &) { return nullptr; }
    virtual void block_done_refitted(const BlockDone &done, PuRefit *refit) = 0;

    // After block_done() of the same block, once its results are home (single-process
    // runs, blocks with per-block handles). Default: ignored.
    virtual void results_home(const BlockHome &) {}

    // A planner that plans through promises the dispatcher keeps and may take back
    // (unit_queues.h), or null: the dispatcher then asks next_block() for each block.
    virtual QueuePlanner *queue_planner() { return nullptr; }
};

}  // namespace hetpu
