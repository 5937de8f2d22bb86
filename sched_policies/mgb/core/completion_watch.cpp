// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/mgb/core/completion_watch.h"

namespace hetpu::mgb {

CompletionWatch::Callback CompletionWatch::handed_out(const void *task, Callback field, Callback codelet)
{
    auto it = tasks_.find(task);
    if (it != tasks_.end() && field == trampoline_) {
        ++it->second.pending;  // out again before its previous completion reported
        return trampoline_;
    }
    // A field that is not the trampoline is the application's own (it may have set a new
    // callback before resubmitting): that is what runs and what comes back.
    Entry e{field, field ? field : codelet, 1, 0};
    if (it != tasks_.end()) {
        e.pending += it->second.pending;
        e.hooked = it->second.hooked;
    }
    tasks_[task] = e;
    return trampoline_;
}

void CompletionWatch::released_by_hook(const void *task)
{
    auto it = tasks_.find(task);
    if (it != tasks_.end() && it->second.hooked < it->second.pending)
        ++it->second.hooked;
}

CompletionWatch::Completion CompletionWatch::finish(const void *task, bool count_hook)
{
    Completion c;
    auto it = tasks_.find(task);
    if (it == tasks_.end())
        return c;
    Entry &e = it->second;
    c.known = true;
    c.run = e.run;
    if (count_hook) {
        c.release = e.hooked == 0;
        if (e.hooked > 0)
            --e.hooked;
    }
    if (--e.pending == 0) {
        c.restore = true;
        c.field = e.field;
        tasks_.erase(it);
    } else if (e.hooked > e.pending) {
        e.hooked = e.pending;
    }
    return c;
}

CompletionWatch::Completion CompletionWatch::completed(const void *task) { return finish(task, true); }

CompletionWatch::Completion CompletionWatch::abandoned(const void *task)
{
    Completion c = finish(task, false);
    c.run = nullptr;
    return c;
}

}  // namespace hetpu::mgb
