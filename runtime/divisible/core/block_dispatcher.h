// SPDX-License-Identifier: LGPL-2.1-or-later
// The bookkeeping of a divisible run: which blocks to submit now, and to which worker,
// so that every element is processed exactly once. Pure C++; the StarPU glue turns the
// returned assignments into tasks and reports starts and completions back. Not
// thread-safe: the glue serializes calls.
//
// A planner without promises sizes one block at a time (next_block) and the dispatcher keeps
// kDepth of them in flight per worker. A planner with promises (QueuePlanner, unit_queues.h)
// plans each unit's queue itself; the dispatcher keeps the promises, hands the runner only
// what the planner hands out, and, once everything is handed out, gives an idle unit a backup
// copy of a block handed out to another unit that it would end sooner (backup_choice.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/divisible/core/block_cursor.h"
#include "runtime/divisible/core/block_planner.h"
#include "runtime/divisible/core/planner_extensions.h"
#include "runtime/divisible/core/unit_queues.h"

namespace hetpu {

struct Assignment {
    uint64_t offset = 0;
    uint64_t count = 0;
    int worker = -1;  // -1: let the StarPU policy place it
    // Unique within one dispatcher, from 1; the glue passes it back in BlockDone::id and to
    // started() and claim().
    uint64_t id = 0;
    // A copy of an already handed-out block (same offset and count, another worker): the
    // glue runs it into private output through the job's backup hook; claim() says which
    // copy's output is kept.
    bool backup = false;
};

class BlockDispatcher final : private UnitQueues {
public:
    // Blocks kept in flight per worker by planners without promises: one running, one queued.
    static constexpr unsigned kDepth = 2;

    BlockDispatcher(const BlockRules &rules, BlockPlanner &planner, std::vector<int> worker_ids);
    // Only the range `share` of the job (a rank's share on a multi-rank run).
    BlockDispatcher(const BlockRules &rules, BlockPlanner &planner, std::vector<int> worker_ids, Block share);

    // The first wave of blocks.
    std::vector<Assignment> start();

    // A block finished on done.worker; returns the blocks to submit in its place.
    // `refit`: what prepare_refit() gave for it, run since (may be null). Called for every
    // ending, kept or not: a losing copy still measures its unit and frees it.
    std::vector<Assignment> complete(const BlockDone &done, PuRefit *refit = nullptr);

    // The glue reports that the block (or copy) `id` began executing, `now_s` seconds after
    // the run started. Unknown ids are ignored.
    void started(uint64_t id, double now_s);

    // Withdrawable hand-outs (set_withdrawable): the runner's unit is about to run block `id`
    // (StarPU's pop prologue). False when the block was withdrawn: its range went elsewhere,
    // and the runner runs nothing in its place but still reports its end (complete(), which
    // then measures nothing). True otherwise, and the block can no longer be withdrawn.
    bool take(uint64_t id);
    // Whether `id` was withdrawn (its end is no measurement of its unit).
    bool withdrawn(uint64_t id) const;
    // The runner can turn a handed-out block into nothing up to take() and keeps no output
    // of a block whose range is not claimed (its blocks run into private output): the planner
    // may then take back handed-out blocks like promises. Off by default. Before start().
    void set_withdrawable(bool on) { withdrawable_ = on; }
    // The worker still runs a losing copy of an earlier job, expected to end `until_s`
    // seconds after this run starts: the planner counts it busy until then, and it gets no
    // backup copy before. Before start().
    void set_busy_until(int worker, double until_s);
    // Told of every block withdrawn, when it is (the glue stops waiting for its task).
    void set_on_withdrawn(std::function<void(uint64_t id)> f) { on_withdrawn_ = std::move(f); }
    // Blocks withdrawn so far.
    unsigned withdrawals() const { return withdrawals_; }

    // A block or copy ended, before complete(): true iff it is the first of its range to
    // end, so that its output is the one kept. An unknown id (not handed out by this
    // dispatcher, or already completed) is never kept.
    bool claim(uint64_t id);

    // Ids of copies still running whose range another copy already ended (their output is
    // thrown away when they end; the job may return before).
    std::vector<uint64_t> copies_running() const;

    // Make one backup copy of every block on another worker (HETPU_BACKUP_ALL, for tests:
    // it exercises the glue's paths on any node). Read from the settings at construction.
    void set_backup_all(bool on) { backup_all_ = on; }
    // Backup copies at the tail (planners with promises only), for a job whose runner can
    // run a copy into private output and keep one; off by default: a job that does not opt
    // in never gets a copy.
    void set_tail_backups(bool on) { tail_backups_ = on; }

    // The planner's prepare_refit() for a finished block, before complete() (see
    // PlannerExtensions::prepare_refit); null when the planner has none.
    std::unique_ptr<PuRefit> prepare_refit(const BlockDone &done);

    // A block could not be submitted: forget it so finished() can become true. Its
    // elements are not processed; the run is reported as failed by the glue.
    void abandon(const Assignment &a);

    // Every element done once (or abandoned): copies still running do not hold it.
    bool finished() const { return open_ranges_ == 0 && (stopped_ || (cursor_.exhausted() && promised_ == 0)); }
    // Stop generating blocks (after an error); blocks in flight still complete.
    void stop();

    // Re-sharing across ranks: a range of another rank's share to run here first (returns
    // the blocks to submit now, as start() does), and the unstarted tail of what is left
    // here handed to another rank (BlockCursor::take_tail, promises taken back first; count
    // 0: nothing left). The tail is cut from the last range `may_lend` accepts, judged once
    // the promises are back: a range this rank borrowed is not its to lend, wherever it lies.
    std::vector<Assignment> add_range(uint64_t offset, uint64_t count);
    Block take_tail(uint64_t wanted, const std::function<bool(const Block &back)> &may_lend);
    Block back() const { return cursor_.back(); }
    void put_back(const Block &b) { cursor_.add_back(b.offset, b.count); }

    // Elements not handed out yet (promised or not).
    uint64_t remaining() const { return cursor_.remaining() + promised_; }
    const BlockRules &rules() const { return cursor_.rules(); }
    // Blocks and copies handed out and not yet completed.
    unsigned in_flight() const { return in_flight_; }
    // True when a planner declined every worker and the remainder was forced onto one.
    bool forced_remainder() const { return forced_; }
    // Backup copies handed out so far.
    unsigned backups() const { return backups_; }

private:
    // One handed-out block or copy.
    struct Handed {
        Assignment a;
        uint64_t range = 0;      // the id of the original block of its range
        bool taken = false;      // its unit took it (take()): it runs
        bool withdrawn = false;  // taken back before its unit took it: it runs nothing
    };
    // One range handed out, with the copies of it still running.
    struct Range {
        unsigned live = 0;
        bool kept = false;  // a copy of it ended first (or it was abandoned)
        bool copied = false;
    };

    // UnitQueues, for the planner's plan().
    double now_s() const override { return now_s_; }
    uint64_t unassigned() const override { return stopped_ ? 0 : cursor_.remaining(); }
    const std::vector<int> &workers() const override { return workers_; }
    const std::vector<QueuedBlock> &queue(int worker) const override;
    uint64_t promise(int worker, uint64_t count, bool from_back) override;
    bool can_revoke_last(int worker) const override;
    double busy_until_s(int worker) const override;
    bool revoke_last(int worker) override;
    bool hand_out_next(int worker) override;

    bool withdrawable(int worker, const QueuedBlock &b) const;
    void plan_queues(int worker);
    void revoke_all();
    void tail_backups();
    void queue_progress(int worker);
    uint64_t find_handed(const BlockDone &done) const;
    void forget(uint64_t id, double now_s);
    Assignment hand_out(uint64_t offset, uint64_t count, int worker, bool backup, uint64_t range);
    void enqueue(const Assignment &a);
    void add_backup_copy(const Assignment &a);
    void refill_pool();
    void refill_worker(int worker);
    void ensure_progress(int worker);
    bool emit(uint64_t wanted, int worker);

    BlockCursor cursor_;
    BlockPlanner &planner_;
    QueuePlanner *queue_planner_ = nullptr;
    std::vector<int> workers_;
    std::unordered_map<int, unsigned> worker_in_flight_;  // looked up for every worker at every completion
    std::unordered_map<int, std::vector<QueuedBlock>> queues_;
    std::unordered_map<int, double> busy_until_;  // earlier jobs' copies still running
    // Workers a block was withdrawn from since their last block that ran: at most one
    // withdrawal per worker per block it runs, so that a plan that keeps changing its mind
    // cannot keep a worker running idle twins.
    std::unordered_set<int> withdrew_from_;
    std::vector<Assignment> out_;  // what the current call hands out
    unsigned in_flight_ = 0;
    std::map<uint64_t, Handed> handed_;
    std::unordered_map<uint64_t, Range> ranges_;
    unsigned open_ranges_ = 0;  // ranges handed out and not yet kept
    uint64_t promised_ = 0;     // elements promised and not handed out
    uint64_t next_id_ = 1;
    double now_s_ = 0;
    unsigned backups_ = 0;
    unsigned withdrawals_ = 0;
    bool withdrawable_ = false;
    std::function<void(uint64_t)> on_withdrawn_;
    bool backup_all_ = false;
    bool tail_backups_ = false;
    bool stopped_ = false;
    bool forced_ = false;
};

}  // namespace hetpu
