// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/hdss/core/hdss_planner.h"

#include <algorithm>
#include <numeric>

#include <gsl/gsl_fit.h>

namespace hetpu {

double least_squares_throughput(const std::vector<double> &sizes, const std::vector<double> &times)
{
    const double total_size = std::accumulate(sizes.begin(), sizes.end(), 0.0);
    const double total_time = std::accumulate(times.begin(), times.end(), 0.0);
    const double mean_rate = total_time > 0 ? total_size / total_time : 0.0;
    if (sizes.size() < 2 || std::all_of(sizes.begin(), sizes.end(), [&](double s) { return s == sizes.front(); }))
        return mean_rate;
    double c0, c1, cov00, cov01, cov11, sumsq;
    gsl_fit_linear(sizes.data(), 1, times.data(), 1, sizes.size(), &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
    return c1 > 0 ? 1.0 / c1 : mean_rate;
}

HdssPlanner::HdssPlanner(std::vector<PlannerWorker> workers, const BlockRules &rules, const HdssOptions &options)
    : rules_(rules), options_(options)
{
    for (auto &w : workers) {
        Pu pu;
        pu.info = std::move(w);
        index_by_worker_.emplace(pu.info.id, pus_.size());  // a repeated id finds its first PU
        pus_.push_back(std::move(pu));
    }
    const uint64_t n = std::max<uint64_t>(1, pus_.size());
    x_init_ = std::max(round_block(options_.x_init ? options_.x_init : rules_.total / (64 * n)), rules_.min_block);
    options_.adaptive_blocks = std::max(1u, options_.adaptive_blocks);
}

HdssPlanner::Pu *HdssPlanner::find(int worker)
{
    const auto it = index_by_worker_.find(worker);
    return it == index_by_worker_.end() ? nullptr : &pus_[it->second];
}

void HdssPlanner::compute_weights()
{
    weights_.clear();
    for (const auto &pu : pus_)
        weights_.push_back(least_squares_throughput(pu.sizes, pu.times));
    total_weight_ = std::accumulate(weights_.begin(), weights_.end(), 0.0);
    adapted_ = true;
}

uint64_t HdssPlanner::next_block(int worker, uint64_t remaining)
{
    Pu *pu = find(worker);
    if (!pu || remaining == 0)
        return 0;
    if (!adapted_) {
        // One adaptive block at a time, doubling, so each measurement is clean.
        if (pu->assigned < options_.adaptive_blocks && pu->assigned == pu->done) {
            uint64_t size = x_init_ << pu->assigned;
            ++pu->assigned;
            return size;
        }
        return 0;
    }
    const double share = total_weight_ > 0 ? weights_[pu - pus_.data()] / total_weight_ : 1.0 / pus_.size();
    return std::max(round_block(static_cast<uint64_t>(share * remaining / 2.0)), rules_.min_block);
}

void HdssPlanner::block_done(const BlockDone &done)
{
    Pu *pu = find(done.worker);
    if (!pu)
        return;
    ++pu->done;
    if (!adapted_) {
        pu->sizes.push_back(static_cast<double>(done.count));
        pu->times.push_back(done.exec_s + done.transfer_s);
        if (pu->done == options_.adaptive_blocks && ++adaptive_done_ == pus_.size())
            compute_weights();
    }
}

std::unique_ptr<BlockPlanner> make_hdss_family(const PlannerContext &context, const std::vector<PlannerWorker> &workers,
                                               const BlockRules &rules)
{
    HdssOptions options;
    options.x_init = context.x_init;
    try {
        options.x_init = Settings(context.env).whole("HETPU_HDSS_XINIT").value_or(options.x_init);
    } catch (const SettingError &e) {
        context.report(e.what());
        return nullptr;
    }
    return std::make_unique<HdssPlanner>(workers, rules, options);
}

}  // namespace hetpu
