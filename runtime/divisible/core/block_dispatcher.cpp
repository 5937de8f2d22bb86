// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/core/block_dispatcher.h"

namespace hetpu {

const char *worker_kind_name(WorkerKind kind)
{
    switch (kind) {
    case WorkerKind::Cpu: return "CPU";
    case WorkerKind::OpenCL: return "OpenCL";
    case WorkerKind::Cuda: return "CUDA";
    default: return "other";
    }
}

BlockDispatcher::BlockDispatcher(const BlockRules &rules, BlockPlanner &planner, std::vector<int> worker_ids)
    : BlockDispatcher(rules, planner, std::move(worker_ids), Block{0, rules.total})
{}

BlockDispatcher::BlockDispatcher(const BlockRules &rules, BlockPlanner &planner, std::vector<int> worker_ids,
                                 Block share)
    : cursor_(rules, share.offset, share.count), planner_(planner), workers_(std::move(worker_ids))
{
    for (int w : workers_)
        worker_in_flight_[w] = 0;
}

std::vector<Assignment> BlockDispatcher::add_range(uint64_t offset, uint64_t count)
{
    cursor_.add_front(offset, count);
    std::vector<Assignment> out;
    if (planner_.assigns_workers()) {
        for (int w : workers_)
            refill_worker(w, out);
        ensure_progress(workers_.empty() ? -1 : workers_.front(), out);
    } else {
        refill_pool(out);
        ensure_progress(-1, out);
    }
    return out;
}

bool BlockDispatcher::emit(uint64_t wanted, int worker, std::vector<Assignment> &out)
{
    Block b = cursor_.take(wanted);
    if (b.count == 0)
        return false;
    out.push_back({b.offset, b.count, worker});
    ++in_flight_;
    if (worker >= 0)
        ++worker_in_flight_[worker];
    return true;
}

void BlockDispatcher::refill_pool(std::vector<Assignment> &out)
{
    const unsigned target = kDepth * static_cast<unsigned>(workers_.size());
    while (!stopped_ && in_flight_ < target && !cursor_.exhausted())
        if (!emit(planner_.next_block(-1, cursor_.remaining()), -1, out))
            break;
}

void BlockDispatcher::refill_worker(int worker, std::vector<Assignment> &out)
{
    while (!stopped_ && worker_in_flight_[worker] < kDepth && !cursor_.exhausted())
        if (!emit(planner_.next_block(worker, cursor_.remaining()), worker, out))
            break;
}

// A planner may decline a worker (size 0) but must not decline everyone while work is
// left: that would hang the run. Ask every worker again, then, as a last resort, give the
// remainder to the worker that just finished.
void BlockDispatcher::ensure_progress(int worker, std::vector<Assignment> &out)
{
    if (stopped_ || in_flight_ > 0 || cursor_.exhausted())
        return;
    for (int w : workers_)
        refill_worker(w, out);
    if (in_flight_ == 0 && !cursor_.exhausted()) {
        forced_ = true;
        emit(cursor_.remaining(), planner_.assigns_workers() ? worker : -1, out);
    }
}

std::vector<Assignment> BlockDispatcher::start()
{
    std::vector<Assignment> out;
    if (planner_.assigns_workers()) {
        // Round-robin over depth levels so every worker gets its first block before any
        // worker gets its second.
        for (unsigned level = 0; level < kDepth; ++level)
            for (int w : workers_)
                if (!stopped_ && worker_in_flight_[w] == level && !cursor_.exhausted())
                    emit(planner_.next_block(w, cursor_.remaining()), w, out);
        ensure_progress(workers_.empty() ? -1 : workers_.front(), out);
    } else {
        refill_pool(out);
        ensure_progress(-1, out);
    }
    return out;
}

std::unique_ptr<PuRefit> BlockDispatcher::prepare_refit(const BlockDone &done)
{
    PlannerExtensions *x = planner_.extensions();
    return x ? x->prepare_refit(done) : nullptr;
}

std::vector<Assignment> BlockDispatcher::complete(const BlockDone &done, PuRefit *refit)
{
    std::vector<Assignment> out;
    if (in_flight_ > 0)
        --in_flight_;
    if (refit)
        planner_.extensions()->block_done_refitted(done, refit);
    else
        planner_.block_done(done);
    if (planner_.assigns_workers()) {
        auto it = worker_in_flight_.find(done.worker);
        if (it != worker_in_flight_.end() && it->second > 0)
            --it->second;
        refill_worker(done.worker, out);
        // The completion may have changed the planner's mind about workers it declined
        // before (end of a synchronisation, a new solution): ask them again.
        for (int w : workers_)
            if (w != done.worker)
                refill_worker(w, out);
    } else {
        refill_pool(out);
    }
    ensure_progress(done.worker, out);
    return out;
}

void BlockDispatcher::abandon(const Assignment &a)
{
    if (in_flight_ > 0)
        --in_flight_;
    if (a.worker >= 0 && worker_in_flight_[a.worker] > 0)
        --worker_in_flight_[a.worker];
}

}  // namespace hetpu
