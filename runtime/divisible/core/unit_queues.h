// SPDX-License-Identifier: LGPL-2.1-or-later
// Revocable work queues: what a planner that keeps promises sees of the dispatcher and what
// it may do with it. A unit's queue is its running block, the blocks handed to the runner
// behind it, then its promises: ranges set aside for it that the runner has not seen, which
// the planner may take back (their range returns to the unassigned elements) or hand out
// later. Keeping promises instead of handed-out blocks is what lets a planner give a unit of
// unknown speed a long run of work without betting the job's end on it.
// A handed-out block is committed unless the runner can withdraw it: then, until its unit
// takes it (BlockDispatcher::take), it is taken back like a promise, and its task, when its
// unit reaches it, runs nothing. Its hand-out lead has run meanwhile, so the blocks behind a
// slow unit's running block stay movable without starting their lead late. Pure C++.
#pragma once

#include <cstdint>
#include <vector>

namespace hetpu {

struct QueuedBlock {
    uint64_t id = 0;
    uint64_t offset = 0;
    uint64_t count = 0;
    bool handed = false;    // given to the runner (committed); false: a promise
    bool started = false;   // began executing (reported, or its unit's previous block ended)
    double handed_s = -1;   // when it was handed out
    double started_s = -1;  // when it began (when started)
    bool backup = false;    // a copy of another unit's block
};

// The dispatcher's side, passed to QueuePlanner::plan(). Times are seconds since the run
// started, as the runner reports them.
class UnitQueues {
public:
    virtual ~UnitQueues() = default;
    virtual double now_s() const = 0;
    // Elements neither handed out nor promised.
    virtual uint64_t unassigned() const = 0;
    virtual const std::vector<int> &workers() const = 0;
    // The worker's queue, oldest first: running, handed out, promised.
    virtual const std::vector<QueuedBlock> &queue(int worker) const = 0;
    // Until when (seconds on the run's clock) the worker is expected to be busy with work of
    // an earlier job (a losing backup copy still running): nothing of this job starts there
    // sooner. 0: free.
    virtual double busy_until_s(int worker) const = 0;
    // Sets aside about `count` elements for the worker (rounded as BlockCursor::take does):
    // from the end of the job (`from_back`), else from the best-fitting unassigned range.
    // Returns the elements promised (0: nothing left).
    virtual uint64_t promise(int worker, uint64_t count, bool from_back) = 0;
    // Whether revoke_last(worker) would take something back: the queue ends with a promise,
    // or with a handed-out block its unit has not taken and the runner can withdraw.
    virtual bool can_revoke_last(int worker) const = 0;
    // Takes back the worker's last promise or withdrawable block (false: nothing to take back).
    virtual bool revoke_last(int worker) = 0;
    // Hands the worker's first promise to the runner (false when it has none).
    virtual bool hand_out_next(int worker) = 0;
};

// A planner that plans through promises (BlockPlanner::extensions() -> queue_planner()).
// The dispatcher calls plan() at the start and after every completion; it calls neither
// next_block() nor the depth rule of planners without promises.
class QueuePlanner {
public:
    virtual ~QueuePlanner() = default;
    virtual void plan(UnitQueues &queues) = 0;
    // What `count` elements are expected to take on `worker` once started (seconds; < 0:
    // the planner has no measurement of it yet), and how long after being handed out a block
    // of an idle worker starts. The dispatcher's backup copies at the tail rest on them.
    virtual double expected_s(int worker, uint64_t count) const = 0;
    virtual double lead_s(int worker) const = 0;
};

}  // namespace hetpu
