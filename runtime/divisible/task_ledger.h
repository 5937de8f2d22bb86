// SPDX-License-Identifier: LGPL-2.1-or-later
// The tasks of one divisible run, from submission to what becomes of their output. A block
// may have a backup copy on another unit (BlockDispatcher hands it out); the first of the
// two to end keeps its output (BlockDispatcher::claim) and the other's is thrown away once
// it ends, which the job does not wait for. Pure C++: the StarPU glue (block_run.cpp)
// records the events and carries out what the ledger says (commit, discard, results home).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

namespace hetpu {

struct LedgerTask {
    uint64_t id = 0;
    uint64_t offset = 0;
    uint64_t count = 0;
    int worker = -1;  // the unit it was handed to (-1: the StarPU policy places it)
    bool backup = false;
    void *output = nullptr;  // its private output (null: it writes the job's result directly)
    unsigned pending = 0;    // its per-block handles not yet back in main memory
};

// A task that has ended with every per-block handle back in main memory.
struct SettledTask {
    LedgerTask task;
    // Its output is the range's result: commit the private output (without one, the
    // results are home). false: throw the private output away.
    bool keep = false;
};

// A task still running although the other copy of its range was kept.
struct LosingCopy {
    uint64_t id = 0;
    int worker = -1;
    uint64_t count = 0;
    double started_s = -1;  // when its worker took it (seconds since the run started; < 0: not yet)
};

struct CopyFigures {
    unsigned copies = 0;       // backup copies submitted
    unsigned copies_kept = 0;  // of which the output was kept
    // Seconds of work whose output was thrown away: the execution time of every losing
    // task that ended, plus what each one still running has run so far.
    double lost_s = 0;
    unsigned running = 0;  // losing tasks still running
};

class TaskLedger {
public:
    void submitted(const LedgerTask &task);
    // Its submission failed: as if it had never been submitted.
    void forget(uint64_t id);
    // Its worker took it, now_s seconds after the run started.
    void started(uint64_t id, double now_s);
    // The dispatcher withdrew it (BlockDispatcher::take): it will run nothing, so the job no
    // longer waits for it, it is no losing copy and its time is no lost work.
    void withdraw(uint64_t id);
    // The task ended after exec_s seconds of execution; kept: BlockDispatcher::claim()'s
    // answer. Once a range is kept, its other copy still running is no longer awaited, and
    // a second keep of the same range is refused (thrown away), so that a range's output is
    // committed once whatever the caller says. Returns the task if it is now settled (no
    // handle pending).
    std::optional<SettledTask> ended(uint64_t id, bool kept, double exec_s);
    // One of its per-block handles is back in main memory.
    std::optional<SettledTask> handle_home(uint64_t id);

    // Tasks the job still waits for: those of a range not yet kept, and kept ones whose
    // output is not yet settled.
    unsigned awaited() const { return awaited_; }
    // Every task settled (nothing left that a callback could still report).
    bool empty() const { return tasks_.empty(); }
    // Whether a task not yet settled covers part of [offset, offset + count).
    bool any_in(uint64_t offset, uint64_t count) const;
    // Tasks not yet settled.
    unsigned unsettled() const { return static_cast<unsigned>(tasks_.size()); }
    std::vector<LosingCopy> losing_copies() const;
    // Copy figures of the run so far; the running losers are counted until now_s.
    CopyFigures figures(double now_s) const;
    // Seconds of thrown-away work of each worker so far (same rule as figures()).
    std::map<int, double> lost_by_worker(double now_s) const;
    // Copies each worker was handed.
    const std::map<int, unsigned> &copies_by_worker() const { return copies_by_worker_; }

private:
    struct Entry {
        LedgerTask task;
        double started_s = -1;
        bool ended = false;
        bool kept = false;
        bool awaited = true;
        bool withdrawn = false;
    };
    std::optional<SettledTask> settle_if_done(uint64_t id);
    void stop_awaiting(Entry &e);

    std::unordered_map<uint64_t, Entry> tasks_;
    std::set<uint64_t> kept_offsets_;  // ranges (by offset) whose output was kept
    unsigned awaited_ = 0;
    unsigned copies_ = 0, copies_kept_ = 0;
    std::map<int, double> lost_s_;  // ended losers' execution time, by worker
    std::map<int, unsigned> copies_by_worker_;
};

// When a losing copy still running is expected to end, in seconds on the run's clock: its
// start plus its elements at the rate its worker showed in the run (elements per second;
// 0: unknown), else as long again as it has already run. A copy not yet started counts as
// starting now.
double expected_end_s(const LosingCopy &copy, double rate, double now_s);

}  // namespace hetpu
