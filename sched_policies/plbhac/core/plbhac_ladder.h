// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC's cold start: learning by a ladder instead of a synchronised training phase.
// Every unit starts with a small probe (a 1024th of an even share, at least a granule)
// and, behind it, promises of 8x and 64x the probe (capped at half an even share), which
// the dispatcher keeps and may take back (unit_queues.h): nothing beyond what a unit needs
// to stay busy is committed to a unit of unknown speed. At every completion it re-plans:
//   - each unit's fixed + per-element cost fitted to its blocks (plbhac_unit_fit.h);
//   - the common end time T of the elements left over the measured units, each starting
//     when its queue is done, and no sooner than one hand-out lead from now;
//   - promises that would end after T taken back (of a unit still in its probe: at the best
//     rate its probe could still show), and blocks handed out that their unit has not taken
//     where the runner can withdraw them (unit_queues.h); their ranges reused best-fit;
//   - each unit handed a fraction of its share at a time (the whole of it once it lasts
//     under max(15 x its fixed cost, 1.5 x its lead, a tenth of T)), no block beyond 16x
//     the largest it has run, and enough queued to cover its hand-out lead.
// At the tail the dispatcher adds backup copies (backup_choice.h) from the expectations it
// gives. A job that starts from models (saved, or StarPU's calibration) skips the probes and
// the ladder: each unit's fit starts from its model, rescaled by its first block of the run,
// and the same re-planning, promises, withdrawals and copies follow. Pure C++.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/divisible/core/block_planner.h"
#include "runtime/divisible/core/planner_extensions.h"
#include "runtime/divisible/core/unit_queues.h"
#include "sched_policies/planner_catalog.h"
#include "sched_policies/plbhac/core/plbhac_options.h"
#include "sched_policies/plbhac/core/plbhac_trace.h"
#include "sched_policies/plbhac/core/plbhac_unit_fit.h"

namespace hetpu {

struct PlbhacLadderUnit {
    PlannerWorker info;
    PlbhacUnitFit fit;
    // A warm start's model of the unit (saved models, StarPU's calibration): its time at the
    // smallest and largest size it was measured at. The fit starts from them; the unit's
    // first block of this run rescales them (a node slower or faster than when they were
    // saved), and from then on they weigh as two blocks among this run's.
    std::vector<std::pair<double, double>> seed;
    bool seed_rescaled = false;
    double last_end_s = -1;                                 // its latest block's end
    std::vector<std::pair<double, double>> exec, transfer;  // (elements, seconds), for the saved models
    std::vector<double> latencies, misses;                  // for the saved models (plbhac_warm_start.h)
};

class PlbhacLadderPlanner final : public BlockPlanner,
                                  public PlannerExtensions,
                                  public QueuePlanner,
                                  public LearningPlanner {
public:
    PlbhacLadderPlanner(std::vector<PlannerWorker> workers, const BlockRules &rules, const PlbhacOptions &options);
    ~PlbhacLadderPlanner() override;  // hands on what was learnt (PlbhacOptions::memory, on_learnt)

    std::string name() const override { return "plb-hac"; }
    bool assigns_workers() const override { return true; }
    uint64_t next_block(int, uint64_t) override { return 0; }  // plans through promises only
    void block_done(const BlockDone &done) override;
    PlannerExtensions *extensions() override { return this; }
    void block_done_refitted(const BlockDone &done, PuRefit *) override { block_done(done); }
    QueuePlanner *queue_planner() override { return this; }

    void plan(UnitQueues &queues) override;
    double expected_s(int worker, uint64_t count) const override;
    double lead_s(int worker) const override;

    double training_s() const override { return measured_all_s_; }
    bool warm_started() const override { return warm_; }
    unsigned solve_failures() const override { return 0; }

    // One record per completed block (HETPU_TRACE): phase "ladder" for a unit's first
    // block, "backup" for a copy, "execution" otherwise.
    std::function<void(const PlbhacTraceRecord &)> on_trace;

    uint64_t probe() const { return probe_; }
    const PlbhacLadderUnit *unit(int worker) const;

private:
    struct Plan {
        bool valid = false;
        double end_s = 0;
        std::vector<double> shares;  // per unit index, elements
    };

    void start(UnitQueues &q);
    Plan solve(const UnitQueues &q, uint64_t elements) const;
    double committed_end(const UnitQueues &q, size_t u) const;  // < 0: unknown
    void revoke_late(UnitQueues &q);
    void revoke_unmeasured(UnitQueues &q, double end_s);
    void issue(UnitQueues &q, size_t u);
    void hand_out(UnitQueues &q, size_t u);
    double queued_s(const UnitQueues &q, size_t u) const;
    uint64_t cap(size_t u) const;
    PlbhacLadderUnit *find(int worker);
    void refresh_planning_fits();
    bool seed_from(const PlbhacMemory &memory);
    void rescale_seed(PlbhacLadderUnit &u, double count, double seconds);

    BlockRules rules_;
    PlbhacOptions options_;
    std::vector<PlbhacLadderUnit> units_;
    uint64_t probe_ = 0;
    bool started_ = false;
    bool warm_ = false;  // every unit seeded from models: no probes, no ladder
    // What the plan prices each unit by (refreshed at every plan()): its own fit once
    // measured, else that of the median measured unit of its kind (units of a kind are alike
    // until shown otherwise: the first CPU measured must not be planned as the only CPU), else
    // none (left out of the plan).
    std::vector<const PlbhacUnitFit *> planning_fits_;
    double measured_all_s_ = 0;
};

}  // namespace hetpu
