// SPDX-License-Identifier: LGPL-2.1-or-later
// CompletionWatch: the bookkeeping that lets a policy hear of every task's completion through
// the task's callback, including the orderings StarPU allows (a task resubmitted and run again
// before its previous callback has run; post_exec_hook before the callback, or never).
#include "sched_policies/mgb/core/completion_watch.h"

#include <gtest/gtest.h>

using hetpu::mgb::CompletionWatch;

namespace {

void trampoline(void *) {}
void app_callback(void *) {}
void codelet_callback(void *) {}

// One starpu_task's callback field, as the scheduler keeps it.
struct Task {
    CompletionWatch::Callback field = nullptr;
};

void hand_out(CompletionWatch &w, Task &t, CompletionWatch::Callback codelet = nullptr)
{
    t.field = w.handed_out(&t, t.field, codelet);
}

CompletionWatch::Completion complete(CompletionWatch &w, Task &t)
{
    const CompletionWatch::Completion c = w.completed(&t);
    if (c.restore)
        t.field = c.field;
    return c;
}

}  // namespace

TEST(CompletionWatch, AnApplicationTaskRunsItsCallbackAndGetsItsFieldBack)
{
    CompletionWatch w(trampoline);
    Task t{app_callback};
    hand_out(w, t);
    EXPECT_EQ(t.field, trampoline);
    w.released_by_hook(&t);  // post_exec_hook, then the callback
    const CompletionWatch::Completion c = complete(w, t);
    EXPECT_TRUE(c.known);
    EXPECT_EQ(c.run, app_callback);
    EXPECT_FALSE(c.release) << "the hook released it";
    EXPECT_EQ(t.field, app_callback);
    EXPECT_EQ(w.watched(), 0u);
}

TEST(CompletionWatch, ATaskTheHookNeverSeesIsReleasedByItsCallback)
{
    // StarPU's internal tasks (a reduction's combining tasks): no post_exec_hook. The codelet's
    // callback runs when the task has none, as StarPU would.
    CompletionWatch w(trampoline);
    Task t;
    hand_out(w, t, codelet_callback);
    const CompletionWatch::Completion c = complete(w, t);
    EXPECT_TRUE(c.release);
    EXPECT_EQ(c.run, codelet_callback);
    EXPECT_EQ(t.field, nullptr);
}

TEST(CompletionWatch, ATaskResubmittedBeforeItsCallbackRanKeepsBothCompletions)
{
    // tag_restartable's order: the first run's tag is released, the application resubmits the
    // task, the second run ends (hook and callback) before the first run's callback runs.
    CompletionWatch w(trampoline);
    Task t{app_callback};
    hand_out(w, t);
    w.released_by_hook(&t);  // first run: hook
    hand_out(w, t);          // resubmitted, handed out again: the field is still the trampoline
    EXPECT_EQ(t.field, trampoline);
    w.released_by_hook(&t);  // second run: hook
    CompletionWatch::Completion second = complete(w, t);
    EXPECT_EQ(second.run, app_callback);
    EXPECT_FALSE(second.release);
    EXPECT_EQ(t.field, trampoline) << "the first run's callback is still to come";
    CompletionWatch::Completion first = complete(w, t);
    EXPECT_EQ(first.run, app_callback) << "the application's callback runs for both runs";
    EXPECT_FALSE(first.release);
    EXPECT_EQ(t.field, app_callback);
    EXPECT_EQ(w.watched(), 0u);
}

TEST(CompletionWatch, ALateCallbackDoesNotReleaseTheNextPlacement)
{
    // First run: hook released it. Resubmitted and handed out again (a new reservation). The
    // first run's callback then comes: it must not release the second run's reservation.
    CompletionWatch w(trampoline);
    Task t;
    hand_out(w, t);
    w.released_by_hook(&t);
    hand_out(w, t);
    EXPECT_FALSE(complete(w, t).release) << "the first run's callback";
    // The second run ends: hook, then callback.
    w.released_by_hook(&t);
    EXPECT_FALSE(complete(w, t).release);
    EXPECT_EQ(w.watched(), 0u);
}

TEST(CompletionWatch, APushedBackTaskGivesUpItsHandOut)
{
    // A codelet's -EAGAIN: StarPU pushes the task back; the hand-out never completes.
    CompletionWatch w(trampoline);
    Task t{app_callback};
    hand_out(w, t);
    const CompletionWatch::Completion a = w.abandoned(&t);
    EXPECT_TRUE(a.restore);
    EXPECT_EQ(a.run, nullptr);
    t.field = a.field;
    EXPECT_EQ(t.field, app_callback);
    hand_out(w, t);  // placed and handed out again
    w.released_by_hook(&t);
    const CompletionWatch::Completion c = complete(w, t);
    EXPECT_EQ(c.run, app_callback);
    EXPECT_EQ(t.field, app_callback);
    EXPECT_EQ(w.watched(), 0u);
}

TEST(CompletionWatch, AnUnknownTaskIsLeftAlone)
{
    CompletionWatch w(trampoline);
    Task t;
    w.released_by_hook(&t);
    const CompletionWatch::Completion c = w.completed(&t);
    EXPECT_FALSE(c.known);
    EXPECT_FALSE(c.release);
    EXPECT_EQ(c.run, nullptr);
}
