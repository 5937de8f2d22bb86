// SPDX-License-Identifier: LGPL-2.1-or-later
// HDSS (Belviranli et al., the PLB-HAC paper's baseline): two phases.
//   adaptive    every PU processes blocks of growing size (x_init, 2 x_init, 4 x_init...,
//               `adaptive_blocks` of them); its weight is its throughput, estimated by least
//               squares on (size, time) of those blocks (time = a + size / throughput);
//               a PU that finishes its adaptive blocks waits for the others (HDSS's
//               synchronisation);
//   completion  blocks proportional to the weights, decreasing: each request takes the PU's
//               weight share of half the data still unassigned (guided self-scheduling).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "runtime/divisible/core/block_planner.h"
#include "sched_policies/planner_catalog.h"

namespace hetpu {

struct HdssOptions {
    uint64_t x_init = 0;  // first adaptive block; 0: total / (64 * PUs)
    unsigned adaptive_blocks = 3;
};

class HdssPlanner final : public BlockPlanner {
public:
    HdssPlanner(std::vector<PlannerWorker> workers, const BlockRules &rules, const HdssOptions &options);

    std::string name() const override { return "hdss"; }
    bool assigns_workers() const override { return true; }
    uint64_t next_block(int worker, uint64_t remaining) override;
    void block_done(const BlockDone &done) override;

    bool adapted() const { return adapted_; }
    // Weights (elements per second) after the adaptive phase, by PU order.
    const std::vector<double> &weights() const { return weights_; }

private:
    struct Pu {
        PlannerWorker info;
        unsigned assigned = 0;
        unsigned done = 0;
        std::vector<double> sizes, times;
    };
    Pu *find(int worker);
    void compute_weights();
    uint64_t round_block(uint64_t x) const { return x / rules_.granule * rules_.granule; }

    BlockRules rules_;
    HdssOptions options_;
    uint64_t x_init_ = 0;
    std::vector<Pu> pus_;
    // Per-completion and per-request work is O(1) in the PUs: the dispatcher asks every idle
    // worker after each completion, so a scan there is quadratic on a large cluster.
    std::unordered_map<int, size_t> index_by_worker_;  // worker id -> position in pus_
    unsigned adaptive_done_ = 0;                       // PUs that have run all their adaptive blocks
    bool adapted_ = false;
    std::vector<double> weights_;
    double total_weight_ = 0;
};

// Throughput (elements/s) from (size, seconds) samples by least squares on
// time = latency + size / throughput; falls back to total size / total time when the fit
// is degenerate (one distinct size, or a non-positive slope).
double least_squares_throughput(const std::vector<double> &sizes, const std::vector<double> &times);

// hdss's planner family (planner_catalog.h): the first adaptive block from HETPU_HDSS_XINIT,
// else the context's, else total / (64 * PUs).
std::unique_ptr<BlockPlanner> make_hdss_family(const PlannerContext &context, const std::vector<PlannerWorker> &workers,
                                               const BlockRules &rules);

}  // namespace hetpu
