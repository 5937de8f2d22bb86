// SPDX-License-Identifier: LGPL-2.1-or-later
// Everything one PLB-HAC planner knows about its job, in one plain struct: the parts of the
// planner (plbhac_training.h, plbhac_steps.h, plbhac_trust.h, plbhac_step_solve.h,
// plbhac_final.h, plbhac_execution.h, plbhac_measure.h, plbhac_warm_start.h) are free
// functions over it, so that each can be read and tested alone, and the facade
// (plbhac_planner.h) only orchestrates them.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "runtime/divisible/core/block_planner.h"
#include "sched_policies/plbhac/core/plbhac_options.h"
#include "sched_policies/plbhac/core/plbhac_pu.h"
#include "sched_policies/plbhac/core/plbhac_straggle.h"

namespace hetpu {

struct PlbhacState {
    BlockRules rules;
    PlbhacOptions options;
    uint64_t x_init = 0;
    std::vector<std::unique_ptr<PlbhacPuState>> pus;
    std::unordered_map<int, size_t> index_by_worker;  // worker id -> position in pus
    // plbhac_reserved_for_final(), while reserved_known: every write to solution,
    // share_left or final_taken clears reserved_known.
    mutable uint64_t reserved = 0;
    mutable bool reserved_known = false;

    bool trained = false;
    bool warm_started = false;
    int first_finisher = -1;    // worker that finished its first training block first
    double first_finish_s = 0;  // its measured time for that block

    unsigned solved_step = 0;
    uint64_t step_workload = 0;    // elements per virtual step (before the tail shrink), set by the first solve
    uint64_t solved_workload = 0;  // workload of the last solve
    unsigned tail_start_step = 0;  // 0: not in the tail yet
    bool final_solved = false;     // the latest solve shared out everything left
    bool force_final = false;      // the next solve shares out everything left (plbhac_resolve_final)
    unsigned measurements_since_solve = 0;
    double miss_since_solve_s = 0;   // largest |measured - predicted| of a block since the last solve
    std::vector<uint64_t> solution;  // per PU (index in pus), elements
    std::vector<double> solve_times;
    unsigned solve_failures = 0;
    unsigned refits_applied = 0;
    unsigned hedged_solves = 0;
    // The straggle hedge's draws, made at its first use and rescaled when the spreads change.
    std::unique_ptr<PlbhacStraggleDraws> straggle_draws;
    double last_hedge_s = 0;  // wall time of the latest hedge's candidate solves
    double hedge_k = -1;      // the straggle hedge's choice for this job's final solves (-1: none yet)
    double now_s = 0;         // latest completion seen: next_block is asked right after one
    double training_end_s = 0;

    uint64_t round_block(uint64_t x) const { return x / rules.granule * rules.granule; }
    // Looked up by map: the planner is asked once per completion and per idle worker, and a
    // scan of a large cluster's PUs each time would dominate its planning time.
    PlbhacPuState *find(int worker)
    {
        const auto it = index_by_worker.find(worker);
        return it == index_by_worker.end() ? nullptr : pus[it->second].get();
    }
    const PlbhacPuState *find(int worker) const
    {
        const auto it = index_by_worker.find(worker);
        return it == index_by_worker.end() ? nullptr : pus[it->second].get();
    }
};

}  // namespace hetpu
