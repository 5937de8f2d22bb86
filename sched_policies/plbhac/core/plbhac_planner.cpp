// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_planner.h"

#include <algorithm>
#include <utility>

#include "sched_policies/plbhac/core/plbhac_execution.h"
#include "sched_policies/plbhac/core/plbhac_measure.h"
#include "sched_policies/plbhac/core/plbhac_training.h"

namespace hetpu {

PlbhacPlanner::PlbhacPlanner(std::vector<PlannerWorker> workers, const BlockRules &rules, const PlbhacOptions &options)
{
    s_.rules = rules;
    s_.options = options;
    for (auto &w : workers) {
        auto pu = std::make_unique<PlbhacPuState>();
        pu->info = std::move(w);
        pu->min_block = s_.rules.min_block;
        if (pu->info.kind != WorkerKind::Cpu && s_.options.accel_min_block > pu->min_block)
            pu->min_block = s_.round_block(s_.options.accel_min_block);
        pu->index = s_.pus.size();
        s_.index_by_worker.emplace(pu->info.id, pu->index);  // a repeated id finds its first PU
        s_.pus.push_back(std::move(pu));
    }
    s_.x_init = plbhac_x_init(s_.rules, s_.options, s_.pus.size());
    s_.solution.assign(s_.pus.size(), 0);
    plbhac_warm_start(s_);
}

PlbhacPlanner::~PlbhacPlanner()
{
    if (!s_.options.memory && !s_.options.on_learnt)
        return;
    PlbhacMemory m;
    if (!plbhac_learnt(s_, m))
        return;
    if (s_.options.on_learnt) {
        try {
            s_.options.on_learnt(m);
        } catch (...) {
            // Saving is a convenience: the run's result is unaffected by a failed save.
        }
    }
    if (s_.options.memory)
        *s_.options.memory = std::move(m);
}

uint64_t PlbhacPlanner::current_block(int worker) const
{
    for (size_t i = 0; i < s_.pus.size(); ++i)
        if (s_.pus[i]->info.id == worker)
            return s_.solution[i];
    return 0;
}

uint64_t PlbhacPlanner::next_block(int worker, uint64_t remaining)
{
    PlbhacPuState *pu = s_.find(worker);
    if (!pu || remaining == 0)
        return 0;
    if (!s_.trained)
        return plbhac_training_block(s_, *pu, remaining);
    if (pu->share_left > 0) {
        const uint64_t size = std::min(pu->share_left, remaining);
        pu->share_left -= size;
        s_.reserved_known = false;
        return plbhac_hand_out(s_, *pu, size, pu->share_block);
    }
    // After the final solve every element left is reserved for a PU's final share.
    if (pu->pending_gap_s > s_.options.gap_threshold_s && !s_.final_solved)
        if (uint64_t size = plbhac_gap_block(s_, *pu, remaining))
            return size;
    return plbhac_regular_block(s_, *pu, remaining);
}

void PlbhacPlanner::block_done(const BlockDone &done) { plbhac_apply_done(s_, done, nullptr, on_trace); }

std::unique_ptr<PuRefit> PlbhacPlanner::prepare_refit(const BlockDone &done)
{
    const PlbhacPuState *pu = s_.find(done.worker);
    const double x = static_cast<double>(done.count);
    if (!pu || (!PlbhacRefit::fits_exec(x, done.exec_s) && !PlbhacRefit::fits_transfer(x, done.transfer_s)))
        return nullptr;
    return std::make_unique<PlbhacRefit>(*pu, done);
}

void PlbhacPlanner::block_done_refitted(const BlockDone &done, PuRefit *refit)
{
    plbhac_apply_done(s_, done, dynamic_cast<PlbhacRefit *>(refit), on_trace);
}

void PlbhacPlanner::results_home(const BlockHome &home)
{
    if (PlbhacPuState *pu = s_.find(home.worker))
        plbhac_note_results_home(*pu, home);
}

std::unique_ptr<BlockPlanner> make_plbhac_planner(const std::vector<PlannerWorker> &workers, const BlockRules &rules,
                                                  const PlbhacOptions &options)
{
    return std::make_unique<PlbhacPlanner>(workers, rules, options);
}

}  // namespace hetpu
