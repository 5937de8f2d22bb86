// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC: profile-based load balancing for a divisible job on heterogeneous
// processing units, as a BlockPlanner the StarPU runner and `hetpu sim` both drive.
// This facade only orchestrates the planner's parts, each a unit of its own over the
// shared PlbhacState (plbhac_state.h); docs/design.md, "The PLB-HAC planner's parts":
//
//   training   plbhac_training.h: x_init, then 2 x_init R (docs/design.md, PLB-HAC training
//              block (erratum)); the only synchronisation: when every PU has finished both
//              training blocks, the models are fitted and system (3) solved;
//   execution  plbhac_execution.h: asynchronous, a PU's k-th regular block belongs to
//              virtual step k, and the first PU to enter step k re-solves
//              (plbhac_step_solve.h) with all measurements; the others use the latest
//              solution without waiting; gap blocks fill a PU's early finish, probe blocks
//              keep a left-out PU measured;
//   steps      plbhac_steps.h: how much each step shares out, the tail's shrink;
//   trust      plbhac_trust.h: no block far beyond the sizes a PU has run;
//   final      plbhac_final.h: the solve that ends the job, hedged against straggle;
//   measuring  plbhac_measure.h, plbhac_latency.h: what a completed block teaches;
//   warm start plbhac_warm_start.h: the models a previous job of the same name left.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/divisible/core/block_planner.h"
#include "runtime/divisible/core/planner_extensions.h"
#include "sched_policies/planner_catalog.h"
#include "sched_policies/plbhac/core/plbhac_latency.h"
#include "sched_policies/plbhac/core/plbhac_options.h"
#include "sched_policies/plbhac/core/plbhac_state.h"
#include "sched_policies/plbhac/core/plbhac_trace.h"
#include "sched_policies/plbhac/core/plbhac_warm_start.h"

namespace hetpu {

class PlbhacPlanner final : public BlockPlanner, public PlannerExtensions, public LearningPlanner {
public:
    PlbhacPlanner(std::vector<PlannerWorker> workers, const BlockRules &rules, const PlbhacOptions &options);
    ~PlbhacPlanner() override;  // hands on what was learnt (PlbhacOptions::memory, on_learnt)

    std::string name() const override { return "plb-hac"; }
    bool assigns_workers() const override { return true; }
    uint64_t next_block(int worker, uint64_t remaining) override;
    void block_done(const BlockDone &done) override;
    PlannerExtensions *extensions() override { return this; }
    std::unique_ptr<PuRefit> prepare_refit(const BlockDone &done) override;
    void block_done_refitted(const BlockDone &done, PuRefit *refit) override;
    void results_home(const BlockHome &home) override;

    std::function<void(const PlbhacTraceRecord &)> on_trace;

    // Introspection (tests, reports).
    bool training() const { return !s_.trained; }
    bool warm_started() const override { return s_.warm_started; }
    // Seconds from the start of the job to the end of the training synchronisation (0 for
    // a warm start; the latest completion so far while still training).
    double training_s() const override { return s_.trained ? s_.training_end_s : s_.now_s; }
    unsigned solved_step() const { return s_.solved_step; }
    const std::vector<double> &solve_times_s() const { return s_.solve_times; }
    uint64_t current_block(int worker) const;
    uint64_t x_init() const { return s_.x_init; }
    unsigned solve_failures() const override { return s_.solve_failures; }
    unsigned refits_applied() const { return s_.refits_applied; }  // block_done_refitted's refits taken as run
    // Final solves whose plan the straggle hedge changed (plbhac_hedge_final's search, or a
    // later final solve with the k it chose).
    unsigned hedged_solves() const { return s_.hedged_solves; }

private:
    PlbhacState s_;
};

std::unique_ptr<BlockPlanner> make_plbhac_planner(const std::vector<PlannerWorker> &workers, const BlockRules &rules,
                                                  const PlbhacOptions &options);

}  // namespace hetpu
