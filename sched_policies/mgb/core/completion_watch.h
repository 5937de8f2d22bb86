// SPDX-License-Identifier: LGPL-2.1-or-later
// Follows the completions of the tasks a policy hands out through the tasks' callbacks.
//
// StarPU calls a policy's post_exec_hook for the application's tasks only: the tasks it
// submits itself (a STARPU_REDUX reduction's combining tasks, data-acquire and partition
// helpers) never reach it, so a policy that holds something from pop until post_exec (a
// device reservation) must also hear of completion another way. The task's callback runs for
// every task, after post_exec_hook, so the policy points each task's callback field at its
// own trampoline while the task is out, and the trampoline runs what StarPU would have run.
//
// Two orderings make the bookkeeping more than a saved pointer:
//   - StarPU releases a task's dependencies and tags before it runs the callback, and an
//     application may resubmit the same task object at once: a task can be handed out again,
//     and even complete again, before its previous completion's callback has run. So
//     hand-outs are counted, and the task's own field comes back only when none is left.
//   - After post_exec_hook released a hand-out, the callback of that completion must not
//     release anything: by then the task may hold a newer placement. Hand-outs released by
//     the hook are counted too.
// Pure bookkeeping keyed by task address: the caller (mgb_scheduler.cpp) guards it with its
// mutex and applies the field changes it returns to the starpu_task.
#pragma once

#include <cstddef>
#include <unordered_map>

namespace hetpu::mgb {

class CompletionWatch {
public:
    using Callback = void (*)(void *);

    explicit CompletionWatch(Callback trampoline) : trampoline_(trampoline) {}

    // The task is handed out, its callback field holding `field` (the trampoline when it is
    // still out from an earlier hand-out) and its codelet's callback being `codelet`, which
    // StarPU runs when the field is null. Returns what the field must hold: the trampoline.
    Callback handed_out(const void *task, Callback field, Callback codelet);

    // post_exec_hook released the task's latest unreleased hand-out.
    void released_by_hook(const void *task);

    struct Completion {
        Callback run = nullptr;    // what StarPU would have run (null: nothing)
        bool release = false;      // the caller releases the placement (no hook did)
        bool restore = false;      // no hand-out left: the field takes `field` again
        Callback field = nullptr;  // the task's own callback field
        bool known = false;        // false: not a task handed out here (nothing to do)
    };
    // The trampoline ran for one completion of the task.
    Completion completed(const void *task);

    // A hand-out that will never complete (StarPU pushed the task back: a codelet's -EAGAIN).
    // `restore`/`field` as in Completion.
    Completion abandoned(const void *task);

    std::size_t watched() const { return tasks_.size(); }

private:
    struct Entry {
        Callback field;
        Callback run;
        unsigned pending;  // hand-outs whose completion has not reported
        unsigned hooked;   // of those, released by post_exec_hook
    };
    Completion finish(const void *task, bool count_hook);

    Callback trampoline_;
    std::unordered_map<const void *, Entry> tasks_;
};

}  // namespace hetpu::mgb
