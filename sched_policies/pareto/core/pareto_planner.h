// SPDX-License-Identifier: LGPL-2.1-or-later
// The block planner of the hepopta/htpopta policies: one block per chosen processor, sized
// by one point of the exact Pareto front computed from the job's calibrated profiles
// (the HEPOPTA paper). Pure C++, no StarPU: the policy files only read the environment and the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/divisible/core/block_planner.h"
#include "sched_policies/pareto/core/front_cache.h"
#include "sched_policies/pareto/core/pareto_front.h"
#include "sched_policies/pareto/core/profile_csv.h"
#include "sched_policies/pareto/core/tradeoff.h"

namespace hetpu {

// The processor name of each worker in a profile: "<kind><index>" with kind cpu, opencl or
// cuda (other for anything else) and index the worker's rank among the given workers of
// that kind, in the given (StarPU id) order: cpu0, cpu1, opencl0, cuda0, ... These are the
// names `hetpu calibrate` writes.
std::vector<std::string> processor_names(const std::vector<PlannerWorker> &workers);

struct ParetoPlanOptions {
    EnergyObjective objective = EnergyObjective::Dynamic;  // hepopta: Dynamic, htpopta: Total
    double base_power_w = 0;                               // P_S, Total only
    Tradeoff tradeoff;
    // Where computed fronts are kept (nullptr: always search). The key adds the profile
    // file and the hash of its content to the job's total, objective, P_S and processors.
    const FrontCache *cache = nullptr;
    std::string profile_path;
    std::uint64_t profile_hash = 0;
};

struct ParetoPlan {
    std::vector<std::uint64_t> shares;  // elements per worker, same order as the workers
    Distribution chosen;                // the front point, in the profiles' figures
    std::size_t chosen_index = 0;       // into the front (increasing energy)
    std::size_t front_size = 0;
    bool cached = false;             // the front came from the cache, no search
    std::vector<std::string> notes;  // profile rows or workers left out, and why
};

// Computes the front of the job's total over the processors that are both in the profiles
// and among the workers, and picks the tradeoff's point. Throws std::runtime_error (or the
// profile core's own error) saying why there is no plan (no processor in common, total not
// reachable from the measured sizes, a share not a multiple of the job's granule ...); the
// caller then falls back to a load-balanced split.
ParetoPlan make_pareto_plan(const ProfileSet &profiles, const std::vector<PlannerWorker> &workers,
                            const BlockRules &rules, const ParetoPlanOptions &options);

// Hands each worker its share as one block, once; declines everything afterwards.
class ParetoPlanner final : public BlockPlanner {
public:
    ParetoPlanner(std::string name, const std::vector<PlannerWorker> &workers, std::vector<std::uint64_t> shares);
    std::string name() const override { return name_; }
    bool assigns_workers() const override { return true; }
    std::uint64_t next_block(int worker, std::uint64_t remaining) override;

private:
    std::string name_;
    std::vector<int> ids_;
    std::vector<std::uint64_t> left_;  // share not yet handed out, per worker
};

}  // namespace hetpu
