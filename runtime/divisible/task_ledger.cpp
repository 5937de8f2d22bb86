// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/task_ledger.h"

#include <algorithm>

namespace hetpu {

void TaskLedger::submitted(const LedgerTask &task)
{
    Entry e;
    e.task = task;
    // A range already kept (a copy handed out after its block's output was claimed) is
    // never awaited: whatever it computes is thrown away.
    e.awaited = kept_offsets_.count(task.offset) == 0;
    if (e.awaited)
        ++awaited_;
    if (task.backup) {
        ++copies_;
        ++copies_by_worker_[task.worker];
    }
    tasks_[task.id] = e;
}

void TaskLedger::forget(uint64_t id)
{
    auto it = tasks_.find(id);
    if (it == tasks_.end())
        return;
    stop_awaiting(it->second);
    if (it->second.task.backup) {
        --copies_;
        if (--copies_by_worker_[it->second.task.worker] == 0)
            copies_by_worker_.erase(it->second.task.worker);
    }
    tasks_.erase(it);
}

void TaskLedger::started(uint64_t id, double now_s)
{
    auto it = tasks_.find(id);
    if (it != tasks_.end() && it->second.started_s < 0)
        it->second.started_s = now_s;
}

void TaskLedger::withdraw(uint64_t id)
{
    auto it = tasks_.find(id);
    if (it == tasks_.end())
        return;
    it->second.withdrawn = true;
    stop_awaiting(it->second);
}

void TaskLedger::stop_awaiting(Entry &e)
{
    if (e.awaited) {
        e.awaited = false;
        --awaited_;
    }
}

std::optional<SettledTask> TaskLedger::ended(uint64_t id, bool kept, double exec_s)
{
    auto it = tasks_.find(id);
    if (it == tasks_.end() || it->second.ended)
        return std::nullopt;
    Entry &e = it->second;
    e.ended = true;
    e.kept = kept && kept_offsets_.insert(e.task.offset).second;
    if (e.kept) {
        if (e.task.backup)
            ++copies_kept_;
        // The other copy of the range, if it still runs, runs for nothing now.
        for (auto &[other_id, other] : tasks_)
            if (other_id != id && other.task.offset == e.task.offset && !other.ended)
                stop_awaiting(other);
    } else {
        stop_awaiting(e);
        if (!e.withdrawn)
            lost_s_[e.task.worker] += std::max(0.0, exec_s);
    }
    return settle_if_done(id);
}

std::optional<SettledTask> TaskLedger::handle_home(uint64_t id)
{
    auto it = tasks_.find(id);
    if (it == tasks_.end() || it->second.task.pending == 0)
        return std::nullopt;
    --it->second.task.pending;
    return settle_if_done(id);
}

std::optional<SettledTask> TaskLedger::settle_if_done(uint64_t id)
{
    auto it = tasks_.find(id);
    Entry &e = it->second;
    if (!e.ended || e.task.pending > 0)
        return std::nullopt;
    SettledTask s{e.task, e.kept};
    // A kept task stays awaited until here: the job returns once its output is in place
    // (the caller commits it before it next asks awaited()).
    stop_awaiting(e);
    tasks_.erase(it);
    return s;
}

bool TaskLedger::any_in(uint64_t offset, uint64_t count) const
{
    for (const auto &[id, e] : tasks_)
        if (e.task.offset < offset + count && offset < e.task.offset + e.task.count)
            return true;
    return false;
}

std::vector<LosingCopy> TaskLedger::losing_copies() const
{
    std::vector<LosingCopy> out;
    for (const auto &[id, e] : tasks_)
        if (!e.ended && !e.withdrawn && kept_offsets_.count(e.task.offset))
            out.push_back({id, e.task.worker, e.task.count, e.started_s});
    std::sort(out.begin(), out.end(), [](const LosingCopy &a, const LosingCopy &b) { return a.id < b.id; });
    return out;
}

std::map<int, double> TaskLedger::lost_by_worker(double now_s) const
{
    std::map<int, double> lost = lost_s_;
    for (const LosingCopy &c : losing_copies())
        if (c.started_s >= 0)
            lost[c.worker] += std::max(0.0, now_s - c.started_s);
    return lost;
}

CopyFigures TaskLedger::figures(double now_s) const
{
    CopyFigures f;
    f.copies = copies_;
    f.copies_kept = copies_kept_;
    for (const auto &[worker, s] : lost_by_worker(now_s))
        f.lost_s += s;
    f.running = static_cast<unsigned>(losing_copies().size());
    return f;
}

double expected_end_s(const LosingCopy &copy, double rate, double now_s)
{
    const double start = copy.started_s >= 0 ? std::min(copy.started_s, now_s) : now_s;
    if (rate > 0)
        return std::max(now_s, start + static_cast<double>(copy.count) / rate);
    return now_s + (now_s - start);
}

}  // namespace hetpu
