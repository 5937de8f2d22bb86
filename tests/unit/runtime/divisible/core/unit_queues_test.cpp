// SPDX-License-Identifier: LGPL-2.1-or-later
// The dispatcher's revocable queues: promises held back from the runner, taken back and
// reused best-fit, and backup copies at the tail.
#include "runtime/divisible/core/backup_choice.h"
#include "runtime/divisible/core/block_dispatcher.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <vector>

using namespace hetpu;

namespace {

// A planner whose plan() is a script, and whose units run `seconds_per_element` (absent:
// not measured yet).
class ScriptedPlanner : public BlockPlanner, public PlannerExtensions, public QueuePlanner {
public:
    std::string name() const override { return "scripted"; }
    bool assigns_workers() const override { return true; }
    uint64_t next_block(int, uint64_t) override
    {
        ADD_FAILURE() << "a planner with promises is never asked for a block size";
        return 0;
    }
    void block_done(const BlockDone &d) override { done.push_back(d); }
    PlannerExtensions *extensions() override { return this; }
    void block_done_refitted(const BlockDone &d, PuRefit *) override { block_done(d); }
    QueuePlanner *queue_planner() override { return this; }
    void plan(UnitQueues &q) override
    {
        if (script)
            script(q);
    }
    double expected_s(int worker, uint64_t count) const override
    {
        auto it = seconds_per_element.find(worker);
        return it == seconds_per_element.end() ? -1 : it->second * static_cast<double>(count);
    }
    double lead_s(int) const override { return 0; }

    std::function<void(UnitQueues &)> script;
    std::map<int, double> seconds_per_element;
    std::vector<BlockDone> done;
};

BlockDone done_of(const Assignment &a, double end_s)
{
    BlockDone d;
    d.worker = a.worker;
    d.offset = a.offset;
    d.count = a.count;
    d.exec_s = 0.1;
    d.end_s = end_s;
    d.id = a.id;
    d.backup = a.backup;
    return d;
}

}  // namespace

TEST(UnitQueues, PromisesStayWithTheDispatcherUntilHandedOut)
{
    ScriptedPlanner planner;
    int calls = 0;
    planner.script = [&](UnitQueues &q) {
        if (calls++ > 0)
            return;
        EXPECT_EQ(q.promise(0, 100, false), 100u);
        EXPECT_EQ(q.promise(0, 300, true), 300u);  // from the end of the job
        EXPECT_EQ(q.promise(1, 50, false), 50u);
        EXPECT_TRUE(q.hand_out_next(0));
        EXPECT_TRUE(q.hand_out_next(1));
        EXPECT_FALSE(q.hand_out_next(1)) << "worker 1 has no promise left";
        EXPECT_EQ(q.unassigned(), 550u);
    };
    BlockDispatcher d(BlockRules{1000, 1, 1}, planner, {0, 1});
    d.set_backup_all(false);
    const std::vector<Assignment> first = d.start();
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[0].offset, 0u);
    EXPECT_EQ(first[0].count, 100u);
    EXPECT_EQ(first[1].offset, 100u);
    EXPECT_EQ(first[1].count, 50u);
    EXPECT_EQ(d.remaining(), 850u) << "a promise is not handed out";
    EXPECT_FALSE(d.finished());
}

TEST(UnitQueues, ARevokedPromiseGoesToAnotherUnitAndEveryElementRunsOnce)
{
    // Worker 0 is promised [100, 400) behind its first block; when worker 1 ends first, the
    // plan takes that promise back and gives it to worker 1.
    ScriptedPlanner planner;
    int calls = 0;
    planner.script = [&](UnitQueues &q) {
        ++calls;
        if (calls == 1) {
            q.promise(0, 100, false);
            q.promise(0, 300, false);
            q.promise(1, 100, false);
            q.hand_out_next(0);
            q.hand_out_next(1);
            return;
        }
        if (calls == 2) {
            EXPECT_TRUE(q.revoke_last(0));
            EXPECT_FALSE(q.revoke_last(0)) << "what is handed out stays";
            EXPECT_EQ(q.unassigned(), 300u);
            EXPECT_EQ(q.promise(1, q.unassigned(), false), 300u);
        }
        for (int w : q.workers())
            if (q.queue(w).empty() || !q.queue(w).front().handed)
                q.hand_out_next(w);
    };
    BlockDispatcher d(BlockRules{500, 1, 1}, planner, {0, 1});
    d.set_backup_all(false);
    d.set_tail_backups(false);
    std::vector<int> runs(500, 0);
    std::vector<Assignment> pending = d.start();
    ASSERT_EQ(pending.size(), 2u);
    // Worker 1 ends first: the revoked range is its now.
    Assignment w1 = pending[1];
    pending.erase(pending.begin() + 1);
    for (uint64_t i = w1.offset; i < w1.offset + w1.count; ++i)
        ++runs[i];
    std::vector<Assignment> next = d.complete(done_of(w1, 1.0));
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].worker, 1);
    EXPECT_EQ(next[0].offset, 100u) << "the revoked range, merged with the rest, from its start";
    EXPECT_EQ(next[0].count, 300u);
    pending.insert(pending.end(), next.begin(), next.end());
    double t = 2;
    while (!pending.empty()) {
        const Assignment a = pending.front();
        pending.erase(pending.begin());
        for (uint64_t i = a.offset; i < a.offset + a.count; ++i)
            ++runs[i];
        for (const Assignment &n : d.complete(done_of(a, t++)))
            pending.push_back(n);
    }
    EXPECT_TRUE(d.finished());
    for (int r : runs)
        ASSERT_EQ(r, 1);
}

TEST(UnitQueues, RangesGivenBackAreReusedBestFit)
{
    BlockRules rules{1000, 1, 1};
    BlockCursor c(rules);
    const Block a = c.take(100);  // [0, 100)
    c.take(40);                   // [100, 140)
    c.take(10);                   // [140, 150)
    const Block e = c.take(40);   // [150, 190)
    c.take(10);                   // [190, 200)
    c.give_back(a);
    c.give_back(e);
    EXPECT_EQ(c.ranges(), 3u);
    const Block fit = c.take_best_fit(40);
    EXPECT_EQ(fit.offset, 150u) << "the fragment that fits exactly, not the front one cut in two";
    EXPECT_EQ(fit.count, 40u);
    const Block big = c.take_best_fit(500);
    EXPECT_EQ(big.offset, 200u) << "too large for the fragments: from the range that holds it";
    c.give_back(fit);
    c.give_back({140, 10});  // merges with [150, 190)
    EXPECT_EQ(c.ranges(), 3u);
    EXPECT_EQ(c.remaining(), 100u + 50u + 300u);
}

TEST(UnitQueues, AnIdleMeasuredUnitCopiesALateStartedBlockAtTheTail)
{
    ScriptedPlanner planner;
    planner.seconds_per_element = {{0, 1.0}, {1, 0.01}};
    int calls = 0;
    planner.script = [&](UnitQueues &q) {
        if (calls++ == 0) {
            q.promise(0, 50, false);
            q.promise(1, 50, false);
            q.hand_out_next(0);
            q.hand_out_next(1);
        }
    };
    BlockDispatcher d(BlockRules{100, 1, 1}, planner, {0, 1});
    d.set_backup_all(false);
    d.set_tail_backups(true);
    const std::vector<Assignment> first = d.start();
    ASSERT_EQ(first.size(), 2u);
    d.started(first[0].id, 0.0);
    d.started(first[1].id, 0.0);
    ASSERT_TRUE(d.claim(first[1].id));
    const std::vector<Assignment> copies = d.complete(done_of(first[1], 0.5));
    ASSERT_EQ(copies.size(), 1u) << "worker 0's block ends at 50 s, a copy on worker 1 at 1 s";
    EXPECT_TRUE(copies[0].backup);
    EXPECT_EQ(copies[0].worker, 1);
    EXPECT_EQ(copies[0].offset, first[0].offset);
    EXPECT_EQ(copies[0].count, first[0].count);
    EXPECT_EQ(d.backups(), 1u);
    d.started(copies[0].id, 0.5);
    ASSERT_TRUE(d.claim(copies[0].id));
    EXPECT_TRUE(d.complete(done_of(copies[0], 1.0)).empty()) << "at most one copy per block";
    EXPECT_TRUE(d.finished());
    EXPECT_EQ(d.copies_running(), std::vector<uint64_t>{first[0].id});
    EXPECT_FALSE(d.claim(first[0].id));
    d.complete(done_of(first[0], 50.0));
    EXPECT_TRUE(d.copies_running().empty());
}

TEST(UnitQueues, AnUnmeasuredUnitIsExpectedToTakeAsLongAgainAsItHasRun)
{
    ScriptedPlanner planner;
    planner.seconds_per_element = {{1, 0.01}};   // worker 0: no measurement
    const BackupCandidate early{0, 7, 50, 0.8};  // started at 0.8 s: expected to end at 1.2 s
    const BackupCandidate late{0, 8, 50, 0.0};   // started at 0: expected to end at 2 s
    EXPECT_DOUBLE_EQ(expected_end_s(planner, 1.0, early), 1.2);
    EXPECT_DOUBLE_EQ(expected_end_s(planner, 1.0, late), 2.0);
    // A copy on worker 1 ends 0.5 s from now.
    EXPECT_TRUE(choose_backups(planner, 1.0, {early}, {1}).empty());
    const std::vector<BackupChoice> c = choose_backups(planner, 1.0, {late}, {1});
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].worker, 1);
    EXPECT_EQ(c[0].block, 8u);
    // An idle unit with no measurement itself promises nothing.
    EXPECT_TRUE(choose_backups(planner, 1.0, {BackupCandidate{1, 9, 50, 0.0}}, {0}).empty());
}

// A block's one copy is not spent on a slow unit that happens to be idle first when a fast
// one, busy a little longer, would end it sooner.
TEST(UnitQueues, ACopyWaitsForAFasterUnitAboutToBeFree)
{
    ScriptedPlanner planner;
    planner.seconds_per_element = {{0, 0.1}, {1, 0.08}, {2, 0.001}, {3, 0.09}};  // 2: the fast one
    const BackupCandidate block{0, 9, 50, 0.5};  // started at 0.5 s: expected to end at 5.5 s
    ASSERT_DOUBLE_EQ(expected_end_s(planner, 1.0, block), 5.5);
    // Alone, idle worker 1 copies it (its copy ends at 5 s).
    std::vector<BackupChoice> c = choose_backups(planner, 1.0, {block}, {1});
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].worker, 1);
    // Worker 2, free in 0.2 s, would end a copy at 1.25 s: worker 1 leaves it to worker 2.
    EXPECT_TRUE(choose_backups(planner, 1.0, {block}, {1}, {BusyUnitEnd{2, 1.2}}).empty());
    // Once worker 2 is free, it copies the block.
    c = choose_backups(planner, 1.2, {block}, {1, 2});
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].worker, 2);
    // A busy unit that would end a copy later than the idle one changes nothing.
    c = choose_backups(planner, 1.0, {block}, {1}, {BusyUnitEnd{3, 1.0}});
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].worker, 1);
}

TEST(UnitQueues, AJobThatDoesNotOptInNeverGetsACopy)
{
    ScriptedPlanner planner;
    planner.seconds_per_element = {{0, 1.0}, {1, 0.01}};
    int calls = 0;
    planner.script = [&](UnitQueues &q) {
        if (calls++ == 0) {
            q.promise(0, 50, false);
            q.promise(1, 50, false);
            q.hand_out_next(0);
            q.hand_out_next(1);
        }
    };
    BlockDispatcher d(BlockRules{100, 1, 1}, planner, {0, 1});
    d.set_backup_all(false);
    const std::vector<Assignment> first = d.start();
    ASSERT_EQ(first.size(), 2u);
    d.started(first[0].id, 0.0);
    EXPECT_TRUE(d.complete(done_of(first[1], 0.5)).empty());
    EXPECT_EQ(d.backups(), 0u);
}

TEST(UnitQueues, ALateBlockIsExpectedToTakeAsLongAgainAndAQueuedOneToWaitForIt)
{
    ScriptedPlanner planner;
    planner.seconds_per_element = {{0, 0.01}, {1, 0.01}};
    // Expected to take 0.5 s from its start at 0: on time at 0.4 s, late at 2 s (a stall).
    EXPECT_DOUBLE_EQ(expected_end_s(planner, 0.4, BackupCandidate{0, 1, 50, 0.0}), 0.5);
    EXPECT_DOUBLE_EQ(expected_end_s(planner, 2.0, BackupCandidate{0, 1, 50, 0.0}), 4.0);
    // A block queued behind it ends when the caller says.
    EXPECT_DOUBLE_EQ(expected_end_s(planner, 2.0, BackupCandidate{0, 2, 50, 0.0, 4.5}), 4.5);
    // Both are worth a copy on an idle unit (ending at 2.5 s); the later gains more.
    const std::vector<BackupChoice> c =
        choose_backups(planner, 2.0, {BackupCandidate{0, 1, 50, 0.0}, BackupCandidate{0, 2, 50, 0.0, 4.5}}, {1});
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].block, 2u);
}

// Withdrawable hand-outs: worker 0 is handed two blocks; when worker 1 ends first, the plan
// takes back worker 0's second block, which its unit has not taken. Its task, when worker 0
// reaches it, runs nothing (take() is false), measures nothing, and its range runs once, on
// worker 1.
TEST(UnitQueues, AHandedOutBlockNotTakenIsWithdrawnAndItsRangeRunsOnceElsewhere)
{
    for (bool withdrawable : {true, false}) {
        SCOPED_TRACE(withdrawable ? "withdrawable" : "committed once handed out");
        ScriptedPlanner planner;
        int calls = 0;
        planner.script = [&](UnitQueues &q) {
            ++calls;
            if (calls == 1) {
                q.promise(0, 100, false);
                q.promise(0, 300, false);
                q.promise(1, 100, false);
                q.hand_out_next(0);
                q.hand_out_next(0);
                q.hand_out_next(1);
                return;
            }
            if (calls == 2) {
                EXPECT_EQ(q.can_revoke_last(0), withdrawable);
                EXPECT_EQ(q.revoke_last(0), withdrawable);
                EXPECT_FALSE(q.can_revoke_last(0)) << "the block its unit took stays";
                if (withdrawable) {
                    EXPECT_EQ(q.promise(1, q.unassigned(), false), 300u);
                }
            }
            for (int w : q.workers())
                if (q.queue(w).empty() || !q.queue(w).front().handed)
                    q.hand_out_next(w);
        };
        BlockDispatcher d(BlockRules{500, 1, 1}, planner, {0, 1});
        d.set_backup_all(false);
        d.set_tail_backups(false);
        d.set_withdrawable(withdrawable);
        std::vector<Assignment> first = d.start();
        ASSERT_EQ(first.size(), 3u);
        const Assignment w0a = first[0], w0b = first[1], w1 = first[2];
        ASSERT_EQ(w0b.worker, 0);
        EXPECT_TRUE(d.take(w0a.id));
        EXPECT_TRUE(d.take(w1.id));
        std::vector<int> runs(500, 0);
        auto run = [&](const Assignment &a) {
            for (uint64_t i = a.offset; i < a.offset + a.count; ++i)
                ++runs[i];
        };
        run(w1);
        std::vector<Assignment> pending = d.complete(done_of(w1, 1.0));
        EXPECT_EQ(d.withdrawals(), withdrawable ? 1u : 0u);
        // Worker 0 reaches its second block.
        run(w0a);
        for (const Assignment &n : d.complete(done_of(w0a, 2.0)))
            pending.push_back(n);
        const size_t measured_before = planner.done.size();
        if (d.take(w0b.id)) {
            EXPECT_FALSE(withdrawable);
            run(w0b);
        } else {
            EXPECT_TRUE(withdrawable);
            EXPECT_TRUE(d.withdrawn(w0b.id));
            EXPECT_FALSE(d.claim(w0b.id)) << "a withdrawn block's output is never kept";
        }
        for (const Assignment &n : d.complete(done_of(w0b, 2.5)))
            pending.push_back(n);
        EXPECT_EQ(planner.done.size(), measured_before + (withdrawable ? 0 : 1)) << "nothing ran: nothing measured";
        double t = 3;
        while (!pending.empty()) {
            const Assignment a = pending.front();
            pending.erase(pending.begin());
            ASSERT_TRUE(d.take(a.id));
            run(a);
            for (const Assignment &n : d.complete(done_of(a, t++)))
                pending.push_back(n);
        }
        EXPECT_TRUE(d.finished());
        for (size_t i = 0; i < runs.size(); ++i)
            ASSERT_EQ(runs[i], 1) << "element " << i;
    }
}

// A copy, and a block with a copy, are never withdrawn; nor is a block its unit took.
TEST(UnitQueues, TakenBlocksAndCopiesAreNeverWithdrawn)
{
    for (bool copies : {true, false}) {
        SCOPED_TRACE(copies ? "a copy of every block" : "no copies");
        ScriptedPlanner planner;
        int calls = 0;
        bool checked = false;
        planner.script = [&](UnitQueues &q) {
            if (calls++ == 0) {
                q.promise(0, 100, false);
                q.promise(0, 100, false);
                q.promise(1, 100, false);
                q.hand_out_next(0);
                q.hand_out_next(0);
                q.hand_out_next(1);
                return;
            }
            if (checked)
                return;
            checked = true;
            // Worker 0's second block: not taken, but copied (with copies) or taken (without).
            EXPECT_FALSE(q.can_revoke_last(0));
            EXPECT_FALSE(q.revoke_last(0));
            if (copies) {
                EXPECT_FALSE(q.can_revoke_last(1)) << "worker 1's queue ends with a copy";
            }
        };
        BlockDispatcher d(BlockRules{300, 1, 1}, planner, {0, 1});
        d.set_backup_all(copies);
        d.set_tail_backups(false);
        d.set_withdrawable(true);
        const std::vector<Assignment> first = d.start();
        const Assignment *second = nullptr, *worker1 = nullptr;
        for (const Assignment &a : first) {
            if (a.worker == 0 && !a.backup && a.offset == 100)
                second = &a;
            if (a.worker == 1 && !a.backup)
                worker1 = &a;
        }
        ASSERT_TRUE(second && worker1);
        if (!copies) {
            EXPECT_TRUE(d.take(second->id));
        }
        EXPECT_TRUE(d.take(worker1->id));
        d.complete(done_of(*worker1, 1.0));
        EXPECT_TRUE(checked);
        EXPECT_EQ(d.withdrawals(), 0u);
    }
}

// A rank lends only its own share. Here all of it is handed out or promised when a borrowed
// range arrives and is promised too; taking the promises back puts the borrowed range at the
// back. The tail lent is cut from the rank's own range, never from the borrowed one.
TEST(UnitQueues, ABorrowedRangeTakenBackIsNeverLentOn)
{
    ScriptedPlanner planner;
    int calls = 0;
    planner.script = [&](UnitQueues &q) {
        ++calls;
        if (calls == 1) {  // start: one block handed out, the rest of the share promised
            q.promise(0, 100, false);
            q.hand_out_next(0);
            EXPECT_EQ(q.promise(0, 200, false), 200u);
        } else if (calls == 2) {  // the borrowed range arrives: promised behind them
            EXPECT_EQ(q.promise(0, 200, false), 200u);
        }
    };
    const Block share{0, 300};
    BlockDispatcher d(BlockRules{3000, 1, 1}, planner, {0}, share);
    d.set_backup_all(false);
    d.set_tail_backups(false);
    ASSERT_EQ(d.start().size(), 1u);
    d.add_range(2000, 200);
    ASSERT_EQ(d.remaining(), 400u);
    const auto within_share = [&](const Block &b) {
        return b.count > 0 && b.offset >= share.offset && b.offset + b.count <= share.offset + share.count;
    };
    const Block tail = d.take_tail(100, within_share);
    EXPECT_TRUE(within_share(tail)) << "lent [" << tail.offset << ", " << tail.offset + tail.count << ")";
    EXPECT_EQ(tail.count, 100u);
    EXPECT_EQ(d.remaining() + tail.count, 400u) << "nothing lost";
    // Only the borrowed range left: nothing more to lend.
    EXPECT_EQ(d.take_tail(100, within_share).count, 100u);
    EXPECT_EQ(d.take_tail(100, within_share).count, 0u);
    EXPECT_EQ(d.remaining(), 200u);
}
