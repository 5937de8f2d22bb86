// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/core/block_dispatcher.h"

#include <algorithm>

#include "common/settings.h"
#include "runtime/divisible/core/backup_choice.h"

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
    for (int w : workers_) {
        worker_in_flight_[w] = 0;
        queues_[w];
    }
    if (PlannerExtensions *x = planner_.extensions(); x && planner_.assigns_workers())
        queue_planner_ = x->queue_planner();
    backup_all_ = Settings().flag_or("HETPU_BACKUP_ALL", false);
}

const std::vector<QueuedBlock> &BlockDispatcher::queue(int worker) const
{
    static const std::vector<QueuedBlock> none;
    auto it = queues_.find(worker);
    return it == queues_.end() ? none : it->second;
}

void BlockDispatcher::set_busy_until(int worker, double until_s)
{
    if (queues_.count(worker) && until_s > 0)
        busy_until_[worker] = std::max(busy_until_[worker], until_s);
}

double BlockDispatcher::busy_until_s(int worker) const
{
    auto it = busy_until_.find(worker);
    return it == busy_until_.end() ? 0 : it->second;
}

uint64_t BlockDispatcher::promise(int worker, uint64_t count, bool from_back)
{
    auto it = queues_.find(worker);
    if (stopped_ || it == queues_.end() || count == 0)
        return 0;
    const Block b = from_back ? cursor_.take_tail(count) : cursor_.take_best_fit(count);
    if (b.count == 0)
        return 0;
    QueuedBlock q;
    q.offset = b.offset;
    q.count = b.count;
    it->second.push_back(q);
    promised_ += b.count;
    return b.count;
}

// A handed-out block the runner can still turn into nothing: its unit has not taken it, it
// is no copy and has none (a range with copies is settled by claim()).
bool BlockDispatcher::withdrawable(int worker, const QueuedBlock &b) const
{
    if (!withdrawable_ || b.backup)
        return false;
    if (withdrew_from_.count(worker))
        return false;
    auto h = handed_.find(b.id);
    if (h == handed_.end() || h->second.taken || h->second.withdrawn || h->second.range != b.id)
        return false;
    auto r = ranges_.find(h->second.range);
    return r != ranges_.end() && !r->second.copied && !r->second.kept;
}

bool BlockDispatcher::can_revoke_last(int worker) const
{
    auto it = queues_.find(worker);
    if (it == queues_.end() || it->second.empty())
        return false;
    return !it->second.back().handed || withdrawable(worker, it->second.back());
}

bool BlockDispatcher::revoke_last(int worker)
{
    if (!can_revoke_last(worker))
        return false;
    std::vector<QueuedBlock> &queue = queues_[worker];
    const QueuedBlock q = queue.back();
    queue.pop_back();
    if (q.handed) {
        // Its task stays with the runner until its unit reaches it and runs nothing; its
        // range is settled now, so that only the elements' new blocks can be kept.
        Handed &h = handed_[q.id];
        h.withdrawn = true;
        Range &r = ranges_[h.range];
        r.kept = true;
        --open_ranges_;
        ++withdrawals_;
        withdrew_from_.insert(worker);
        if (on_withdrawn_)
            on_withdrawn_(q.id);
    } else {
        promised_ -= q.count;
    }
    cursor_.give_back({q.offset, q.count});
    return true;
}

bool BlockDispatcher::take(uint64_t id)
{
    auto it = handed_.find(id);
    if (it == handed_.end())
        return true;
    if (it->second.withdrawn)
        return false;
    it->second.taken = true;
    return true;
}

bool BlockDispatcher::withdrawn(uint64_t id) const
{
    auto it = handed_.find(id);
    return it != handed_.end() && it->second.withdrawn;
}

bool BlockDispatcher::hand_out_next(int worker)
{
    auto it = queues_.find(worker);
    if (it == queues_.end())
        return false;
    std::vector<QueuedBlock> &queue = it->second;
    auto q = std::find_if(queue.begin(), queue.end(), [](const QueuedBlock &b) { return !b.handed; });
    if (q == queue.end())
        return false;
    const size_t at = static_cast<size_t>(q - queue.begin());
    promised_ -= q->count;
    const Assignment a = hand_out(q->offset, q->count, worker, false, 0);
    QueuedBlock &b = queues_[worker][at];  // a copy may have been queued on this worker too
    b.id = a.id;
    b.handed = true;
    b.handed_s = now_s_;
    b.started = at == 0;
    b.started_s = b.started ? now_s_ : -1;
    return true;
}

// Records a block (or copy) given to the runner; the caller queues it on its worker.
Assignment BlockDispatcher::hand_out(uint64_t offset, uint64_t count, int worker, bool backup, uint64_t range)
{
    Assignment a{offset, count, worker, next_id_++, backup};
    out_.push_back(a);
    handed_[a.id] = Handed{a, range ? range : a.id};
    if (range) {
        Range &r = ranges_[range];
        r.copied = true;
        ++r.live;
    } else {
        ranges_[a.id] = Range{1, false, false};
        ++open_ranges_;
    }
    ++in_flight_;
    if (worker >= 0)
        ++worker_in_flight_[worker];
    if (backup)
        ++backups_;
    else if (backup_all_)
        add_backup_copy(a);
    return a;
}

// A handed-out block at the end of its worker's queue. A worker with nothing ahead of it
// starts it when it arrives, as far as the dispatcher knows until the runner reports it.
void BlockDispatcher::enqueue(const Assignment &a)
{
    if (a.worker < 0)
        return;
    std::vector<QueuedBlock> &queue = queues_[a.worker];
    QueuedBlock q;
    q.id = a.id;
    q.offset = a.offset;
    q.count = a.count;
    q.handed = true;
    q.handed_s = now_s_;
    q.backup = a.backup;
    q.started = std::none_of(queue.begin(), queue.end(), [](const QueuedBlock &b) { return b.handed; });
    q.started_s = q.started ? now_s_ : -1;
    queue.push_back(q);
}

std::vector<Assignment> BlockDispatcher::add_range(uint64_t offset, uint64_t count)
{
    cursor_.add_front(offset, count);
    out_.clear();
    if (queue_planner_) {
        plan_queues(workers_.empty() ? -1 : workers_.front());
    } else if (planner_.assigns_workers()) {
        for (int w : workers_)
            refill_worker(w);
        ensure_progress(workers_.empty() ? -1 : workers_.front());
    } else {
        refill_pool();
        ensure_progress(-1);
    }
    return std::move(out_);
}

Block BlockDispatcher::take_tail(uint64_t wanted, const std::function<bool(const Block &back)> &may_lend)
{
    revoke_all();
    return cursor_.take_tail(wanted, may_lend);
}

void BlockDispatcher::revoke_all()
{
    for (int w : workers_)
        while (revoke_last(w)) {
        }
}

void BlockDispatcher::stop()
{
    stopped_ = true;
    revoke_all();
}

bool BlockDispatcher::emit(uint64_t wanted, int worker)
{
    Block b = cursor_.take(wanted);
    if (b.count == 0)
        return false;
    enqueue(hand_out(b.offset, b.count, worker, false, 0));
    return true;
}

// The copy goes to the worker after the block's own in the list (the same one when it is
// alone), so that every worker runs copies of another's blocks.
void BlockDispatcher::add_backup_copy(const Assignment &a)
{
    int worker = -1;
    if (a.worker >= 0 && !workers_.empty()) {
        size_t i = 0;
        while (i < workers_.size() && workers_[i] != a.worker)
            ++i;
        worker = workers_[(i + 1) % workers_.size()];
    }
    enqueue(hand_out(a.offset, a.count, worker, true, a.id));
}

void BlockDispatcher::started(uint64_t id, double now_s)
{
    auto it = handed_.find(id);
    if (it == handed_.end())
        return;
    now_s_ = std::max(now_s_, now_s);
    auto q = queues_.find(it->second.a.worker);
    if (q == queues_.end())
        return;
    for (QueuedBlock &b : q->second)
        if (b.id == id) {
            b.started = true;
            b.started_s = now_s;
        }
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
        if (!h.withdrawn && r != ranges_.end() && r->second.kept)
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
// copy of it runs and none has been kept. The next block handed to its worker starts now.
void BlockDispatcher::forget(uint64_t id, double now_s)
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
        std::vector<QueuedBlock> &queue = queues_[h.a.worker];
        queue.erase(std::remove_if(queue.begin(), queue.end(), [&](const QueuedBlock &b) { return b.id == id; }),
                    queue.end());
        for (QueuedBlock &b : queue)
            if (b.handed) {
                if (!b.started) {
                    b.started = true;
                    b.started_s = now_s;
                }
                break;
            }
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

void BlockDispatcher::refill_pool()
{
    const unsigned target = kDepth * static_cast<unsigned>(workers_.size());
    while (!stopped_ && in_flight_ < target && !cursor_.exhausted())
        if (!emit(planner_.next_block(-1, cursor_.remaining()), -1))
            break;
}

void BlockDispatcher::refill_worker(int worker)
{
    while (!stopped_ && worker_in_flight_[worker] < kDepth && !cursor_.exhausted())
        if (!emit(planner_.next_block(worker, cursor_.remaining()), worker))
            break;
}

// A planner may decline a worker (size 0) but must not decline everyone while work is
// left: that would hang the run. Ask every worker again, then, as a last resort, give the
// remainder to the worker that just finished.
void BlockDispatcher::ensure_progress(int worker)
{
    if (stopped_ || in_flight_ > 0 || cursor_.exhausted())
        return;
    for (int w : workers_)
        refill_worker(w);
    if (in_flight_ == 0 && !cursor_.exhausted()) {
        forced_ = true;
        emit(cursor_.remaining(), planner_.assigns_workers() ? worker : -1);
    }
}

// A planner with promises must not leave the runner with nothing to do while work is left:
// hand out a promise of anyone, else everything left to `worker`.
void BlockDispatcher::queue_progress(int worker)
{
    if (stopped_ || in_flight_ > 0 || (cursor_.exhausted() && promised_ == 0))
        return;
    for (int w : workers_)
        if (hand_out_next(w))
            return;
    forced_ = true;
    const int w = worker >= 0 ? worker : (workers_.empty() ? -1 : workers_.front());
    if (promise(w, cursor_.remaining(), false))
        hand_out_next(w);
}

void BlockDispatcher::plan_queues(int worker)
{
    if (!stopped_)
        queue_planner_->plan(*this);
    if (tail_backups_)
        tail_backups();
    queue_progress(worker);
}

// Once everything is handed out, an idle unit may run a copy of a started block that it
// would end sooner than the block's own unit (backup_choice.h).
void BlockDispatcher::tail_backups()
{
    if (stopped_ || !cursor_.exhausted() || promised_ > 0)
        return;
    std::vector<BackupCandidate> started;
    std::vector<BusyUnitEnd> busy;
    for (int w : workers_) {
        double end = -1;  // when what is ahead in the worker's queue is expected to end
        bool known = true;
        for (const QueuedBlock &b : queues_[w]) {
            auto h = handed_.find(b.id);
            if (!b.handed || h == handed_.end())
                break;
            const Range &r = ranges_[h->second.range];
            BackupCandidate c{w, b.id, b.count, b.started_s, -1};
            if (!b.started) {
                const double own = queue_planner_->expected_s(w, b.count);
                if (own < 0 || end < 0) {
                    known = false;
                    break;
                }
                c.queued_end_s = std::max(end, now_s_ + queue_planner_->lead_s(w)) + own;
            }
            end = expected_end_s(*queue_planner_, now_s_, c);
            if (!b.backup && !r.kept && !r.copied)
                started.push_back(c);
        }
        if (!queues_[w].empty() && known && end >= 0)
            busy.push_back({w, std::max(end, busy_until_s(w))});
        else if (queues_[w].empty() && busy_until_s(w) > now_s_)
            busy.push_back({w, busy_until_s(w)});
    }
    if (started.empty())
        return;
    std::vector<int> idle;
    for (int w : workers_)
        if (queues_[w].empty() && busy_until_s(w) <= now_s_)
            idle.push_back(w);
    for (const BackupChoice &c : choose_backups(*queue_planner_, now_s_, started, idle, busy)) {
        const Handed h = handed_[c.block];
        enqueue(hand_out(h.a.offset, h.a.count, c.worker, true, h.range));
    }
}

std::vector<Assignment> BlockDispatcher::start()
{
    out_.clear();
    if (queue_planner_) {
        plan_queues(workers_.empty() ? -1 : workers_.front());
    } else if (planner_.assigns_workers()) {
        // Round-robin over depth levels so every worker gets its first block before any
        // worker gets its second.
        for (unsigned level = 0; level < kDepth; ++level)
            for (int w : workers_)
                if (!stopped_ && worker_in_flight_[w] == level && !cursor_.exhausted())
                    emit(planner_.next_block(w, cursor_.remaining()), w);
        ensure_progress(workers_.empty() ? -1 : workers_.front());
    } else {
        refill_pool();
        ensure_progress(-1);
    }
    return std::move(out_);
}

std::unique_ptr<PuRefit> BlockDispatcher::prepare_refit(const BlockDone &done)
{
    if (withdrawn(done.id))
        return nullptr;
    PlannerExtensions *x = planner_.extensions();
    return x ? x->prepare_refit(done) : nullptr;
}

std::vector<Assignment> BlockDispatcher::complete(const BlockDone &done, PuRefit *refit)
{
    out_.clear();
    now_s_ = std::max(now_s_, done.end_s);
    const uint64_t id = done.id != 0 && handed_.count(done.id) ? done.id : find_handed(done);
    const bool measured = !withdrawn(id);  // a withdrawn block ran nothing
    if (measured)
        withdrew_from_.erase(done.worker);
    claim(id);  // the first to end is kept, whether or not the glue asked
    forget(id, done.end_s);
    if (measured && refit)
        planner_.extensions()->block_done_refitted(done, refit);
    else if (measured)
        planner_.block_done(done);
    if (queue_planner_) {
        plan_queues(done.worker);
    } else if (planner_.assigns_workers()) {
        refill_worker(done.worker);
        // The completion may have changed the planner's mind about workers it declined
        // before (end of a synchronisation, a new solution): ask them again.
        for (int w : workers_)
            if (w != done.worker)
                refill_worker(w);
        ensure_progress(done.worker);
    } else {
        refill_pool();
        ensure_progress(done.worker);
    }
    return std::move(out_);
}

void BlockDispatcher::abandon(const Assignment &a)
{
    BlockDone done;
    done.worker = a.worker;
    done.offset = a.offset;
    done.count = a.count;
    forget(a.id != 0 && handed_.count(a.id) ? a.id : find_handed(done), now_s_);
}

}  // namespace hetpu
