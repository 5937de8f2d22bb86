// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/core/block_dispatcher.h"

#include "common/settings.h"

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
    backup_all_ = Settings().flag_or("HETPU_BACKUP_ALL", false);
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
    Assignment a{b.offset, b.count, worker, next_id_++, false};
    out.push_back(a);
    handed_[a.id] = Handed{a, a.id, -1};
    ranges_[a.id] = Range{1, false, false};
    ++open_ranges_;
    ++in_flight_;
    if (worker >= 0)
        ++worker_in_flight_[worker];
    if (backup_all_)
        add_backup_copy(a, out);
    return true;
}

// The copy goes to the worker after the block's own in the list (the same one when it is
// alone), so that every worker runs copies of another's blocks.
void BlockDispatcher::add_backup_copy(const Assignment &a, std::vector<Assignment> &out)
{
    Range &r = ranges_[a.id];
    if (r.copied)
        return;
    int worker = -1;
    if (a.worker >= 0 && !workers_.empty()) {
        size_t i = 0;
        while (i < workers_.size() && workers_[i] != a.worker)
            ++i;
        worker = workers_[(i + 1) % workers_.size()];
    }
    Assignment copy{a.offset, a.count, worker, next_id_++, true};
    out.push_back(copy);
    handed_[copy.id] = Handed{copy, a.id, -1};
    r.copied = true;
    ++r.live;
    ++in_flight_;
    if (worker >= 0)
        ++worker_in_flight_[worker];
}

void BlockDispatcher::started(uint64_t id, double now_s)
{
    auto it = handed_.find(id);
    if (it != handed_.end())
        it->second.started_s = now_s;
}

bool BlockDispatcher::claim(uint64_t id)
{
    auto it = handed_.find(id);
    if (it == handed_.end())
        return false;
    Range &r = ranges_[it->second.range];
    if (r.kept)
        return false;
    r.kept = true;
    --open_ranges_;
    return true;
}

std::vector<uint64_t> BlockDispatcher::copies_running() const
{
    std::vector<uint64_t> ids;
    for (const auto &[id, h] : handed_) {
        auto r = ranges_.find(h.range);
        if (r != ranges_.end() && r->second.kept)
            ids.push_back(id);
    }
    return ids;
}

// A runner that does not pass ids back: the handed-out block with the same range and worker.
uint64_t BlockDispatcher::find_handed(const BlockDone &done) const
{
    for (const auto &[id, h] : handed_)
        if (h.a.offset == done.offset && h.a.count == done.count && (h.a.worker == done.worker || h.a.worker < 0))
            return id;
    return 0;
}

// The block or copy `id` is no longer running; its range stays open only while another
// copy of it runs and none has been kept.
void BlockDispatcher::forget(uint64_t id)
{
    auto it = handed_.find(id);
    if (it == handed_.end())
        return;
    const Handed h = it->second;
    handed_.erase(it);
    if (in_flight_ > 0)
        --in_flight_;
    if (h.a.worker >= 0) {
        auto w = worker_in_flight_.find(h.a.worker);
        if (w != worker_in_flight_.end() && w->second > 0)
            --w->second;
    }
    auto r = ranges_.find(h.range);
    if (r == ranges_.end())
        return;
    if (r->second.live > 0)
        --r->second.live;
    if (r->second.live == 0) {
        if (!r->second.kept)
            --open_ranges_;
        ranges_.erase(r);
    }
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
    const uint64_t id = done.id != 0 && handed_.count(done.id) ? done.id : find_handed(done);
    claim(id);  // the first to end is kept, whether or not the glue asked
    forget(id);
    if (refit)
        planner_.extensions()->block_done_refitted(done, refit);
    else
        planner_.block_done(done);
    if (planner_.assigns_workers()) {
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
    BlockDone done;
    done.worker = a.worker;
    done.offset = a.offset;
    done.count = a.count;
    forget(a.id != 0 && handed_.count(a.id) ? a.id : find_handed(done));
}

}  // namespace hetpu
