// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/task_ledger.h"

#include <gtest/gtest.h>

namespace hetpu {
namespace {

int output_a, output_b;  // stand-ins for private outputs

LedgerTask task(uint64_t id, uint64_t offset, int worker, bool backup, void *output, unsigned pending)
{
    return {id, offset, 100, worker, backup, output, pending};
}

TEST(TaskLedger, ABlockWithoutCopyIsAwaitedUntilItsResultsAreHome)
{
    TaskLedger ledger;
    ledger.submitted(task(1, 0, 0, false, nullptr, 2));
    EXPECT_EQ(ledger.awaited(), 1u);
    EXPECT_FALSE(ledger.ended(1, true, 0.5));
    EXPECT_EQ(ledger.awaited(), 1u) << "its results are not home yet";
    EXPECT_FALSE(ledger.handle_home(1));
    auto s = ledger.handle_home(1);
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->keep);
    EXPECT_EQ(s->task.id, 1u);
    EXPECT_EQ(ledger.awaited(), 0u);
    EXPECT_TRUE(ledger.empty());
    EXPECT_EQ(ledger.figures(1).copies, 0u);
}

TEST(TaskLedger, HandlesHomeBeforeTheEndSettleAtTheEnd)
{
    TaskLedger ledger;
    ledger.submitted(task(1, 0, 0, false, &output_a, 1));
    EXPECT_FALSE(ledger.handle_home(1));
    auto s = ledger.ended(1, true, 0.1);
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->keep);
    EXPECT_EQ(s->task.output, &output_a);
}

TEST(TaskLedger, TheCopyThatEndsFirstIsKeptAndTheJobStopsWaitingForTheOther)
{
    TaskLedger ledger;
    ledger.submitted(task(1, 0, 0, false, &output_a, 1));  // the block, on a slow unit
    ledger.started(1, 0.0);
    ledger.submitted(task(2, 0, 1, true, &output_b, 1));  // its copy, on a fast one
    ledger.started(2, 1.0);
    EXPECT_EQ(ledger.awaited(), 2u);
    EXPECT_FALSE(ledger.ended(2, true, 0.5));
    EXPECT_EQ(ledger.awaited(), 1u) << "the block is no longer awaited; its copy is, until home";
    auto kept = ledger.handle_home(2);
    ASSERT_TRUE(kept);
    EXPECT_TRUE(kept->keep);
    EXPECT_EQ(kept->task.output, &output_b);
    EXPECT_EQ(ledger.awaited(), 0u) << "the job may return with the block still running";
    EXPECT_FALSE(ledger.empty());

    const auto losers = ledger.losing_copies();
    ASSERT_EQ(losers.size(), 1u);
    EXPECT_EQ(losers[0].id, 1u);
    EXPECT_EQ(losers[0].worker, 0);
    EXPECT_DOUBLE_EQ(losers[0].started_s, 0.0);
    CopyFigures f = ledger.figures(2.0);
    EXPECT_EQ(f.copies, 1u);
    EXPECT_EQ(f.copies_kept, 1u);
    EXPECT_EQ(f.running, 1u);
    EXPECT_DOUBLE_EQ(f.lost_s, 2.0) << "the running loser counts what it has run so far";

    EXPECT_FALSE(ledger.ended(1, false, 3.0));
    auto thrown = ledger.handle_home(1);
    ASSERT_TRUE(thrown);
    EXPECT_FALSE(thrown->keep);
    EXPECT_EQ(thrown->task.output, &output_a);
    EXPECT_TRUE(ledger.empty());
    f = ledger.figures(10.0);
    EXPECT_EQ(f.running, 0u);
    EXPECT_DOUBLE_EQ(f.lost_s, 3.0) << "an ended loser counts its execution time";
    EXPECT_DOUBLE_EQ(ledger.lost_by_worker(10.0)[0], 3.0);
}

TEST(TaskLedger, ARangeIsKeptOnceWhateverTheCallerSays)
{
    TaskLedger ledger;
    ledger.submitted(task(1, 0, 0, false, &output_a, 0));
    ledger.submitted(task(2, 0, 1, true, &output_b, 0));
    auto first = ledger.ended(1, true, 0.1);
    ASSERT_TRUE(first);
    EXPECT_TRUE(first->keep);
    auto second = ledger.ended(2, true, 0.2);
    ASSERT_TRUE(second);
    EXPECT_FALSE(second->keep) << "a second keep of the same range would write its output twice";
    EXPECT_EQ(ledger.figures(1).copies_kept, 0u);
}

TEST(TaskLedger, ACopyHandedOutAfterItsRangeWasKeptIsNeverAwaited)
{
    TaskLedger ledger;
    ledger.submitted(task(1, 0, 0, false, nullptr, 0));
    ASSERT_TRUE(ledger.ended(1, true, 0.1));
    ledger.submitted(task(2, 0, 1, true, &output_b, 1));
    EXPECT_EQ(ledger.awaited(), 0u);
    EXPECT_EQ(ledger.losing_copies().size(), 1u);
}

// A withdrawn block runs nothing: the job does not wait for it, it is no losing copy, and
// its (empty) output is thrown away when it ends, even after another block of the same
// offset was kept.
TEST(TaskLedger, AWithdrawnTaskIsNotAwaitedAndCostsNoLostWork)
{
    TaskLedger ledger;
    ledger.submitted(task(1, 0, 0, false, &output_a, 1));
    ledger.submitted(task(2, 0, 1, false, &output_b, 1));  // its range, handed again from the same offset
    EXPECT_EQ(ledger.awaited(), 2u);
    ledger.withdraw(1);
    EXPECT_EQ(ledger.awaited(), 1u);
    ASSERT_FALSE(ledger.ended(2, true, 0.5));
    auto kept = ledger.handle_home(2);
    ASSERT_TRUE(kept);
    EXPECT_TRUE(kept->keep);
    EXPECT_EQ(ledger.awaited(), 0u) << "the job returns without the withdrawn task";
    EXPECT_TRUE(ledger.losing_copies().empty()) << "a withdrawn task is no losing copy";
    ASSERT_FALSE(ledger.ended(1, false, 3.0));
    auto thrown = ledger.handle_home(1);
    ASSERT_TRUE(thrown);
    EXPECT_FALSE(thrown->keep);
    EXPECT_EQ(ledger.figures(4).lost_s, 0.0) << "it ran nothing: no work was lost";
    EXPECT_TRUE(ledger.empty());
}

TEST(TaskLedger, AFailedSubmissionIsForgotten)
{
    TaskLedger ledger;
    ledger.submitted(task(1, 0, 0, true, &output_a, 1));
    ledger.forget(1);
    EXPECT_EQ(ledger.awaited(), 0u);
    EXPECT_TRUE(ledger.empty());
    EXPECT_EQ(ledger.figures(0).copies, 0u);
    EXPECT_TRUE(ledger.copies_by_worker().empty());
}

TEST(TaskLedger, RepeatedAndUnknownEventsChangeNothing)
{
    TaskLedger ledger;
    ledger.submitted(task(1, 0, 0, false, nullptr, 1));
    EXPECT_FALSE(ledger.ended(7, true, 0.1));
    EXPECT_FALSE(ledger.handle_home(7));
    EXPECT_FALSE(ledger.ended(1, true, 0.1));
    EXPECT_FALSE(ledger.ended(1, true, 0.1));
    ASSERT_TRUE(ledger.handle_home(1));
    EXPECT_FALSE(ledger.handle_home(1));
    EXPECT_EQ(ledger.awaited(), 0u);
}

TEST(TaskLedger, ExpectedEndOfALosingCopy)
{
    // Measured worker: its start plus its elements at the worker's rate.
    EXPECT_DOUBLE_EQ(expected_end_s({1, 0, 100, 2.0}, 50.0, 3.0), 4.0);
    // Already late by that measure: not before now.
    EXPECT_DOUBLE_EQ(expected_end_s({1, 0, 100, 2.0}, 50.0, 5.0), 5.0);
    // Unmeasured: as long again as it has run.
    EXPECT_DOUBLE_EQ(expected_end_s({1, 0, 100, 2.0}, 0.0, 5.0), 8.0);
    // Not started: from now.
    EXPECT_DOUBLE_EQ(expected_end_s({1, 0, 100, -1}, 50.0, 5.0), 7.0);
}

}  // namespace
}  // namespace hetpu
