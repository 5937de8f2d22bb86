// SPDX-License-Identifier: LGPL-2.1-or-later
// The needs declared through include/hetpu/gpu_needs.h. Codelets and tasks are the
// application's structs, which hetpu must not extend, so the declarations live in two maps
// keyed by their addresses. A per-task entry is consumed when the task is scheduled (its
// next execution), so a freed task's address reused by a new task never inherits it.
#include <hetpu/gpu_needs.h>

#include <cerrno>
#include <mutex>
#include <unordered_map>

#include "sched_policies/mgb/gpu_needs_registry.h"

namespace hetpu::mgb {

namespace {

struct Registry {
    std::mutex mutex;
    std::unordered_map<const struct starpu_codelet *, hetpu_gpu_needs_fn> by_codelet;
    std::unordered_map<const struct starpu_task *, struct hetpu_gpu_needs> by_task;
};

Registry &registry()
{
    static Registry r;
    return r;
}

}  // namespace

bool declared_needs(struct starpu_task *task, bool consume, struct hetpu_gpu_needs *needs)
{
    *needs = {};
    hetpu_gpu_needs_fn fn = nullptr;
    {
        Registry &r = registry();
        std::lock_guard<std::mutex> lock(r.mutex);
        if (auto it = r.by_task.find(task); it != r.by_task.end()) {
            *needs = it->second;
            if (consume)
                r.by_task.erase(it);
            return true;
        }
        if (task->cl)
            if (auto it = r.by_codelet.find(task->cl); it != r.by_codelet.end())
                fn = it->second;
    }
    if (!fn)
        return false;
    fn(task, needs);  // outside the lock: the callback may itself read declared needs
    return true;
}

}  // namespace hetpu::mgb

extern "C" int hetpu_codelet_set_gpu_needs(struct starpu_codelet *cl, hetpu_gpu_needs_fn fn)
{
    if (!cl)
        return -EINVAL;
    try {
        auto &r = hetpu::mgb::registry();
        std::lock_guard<std::mutex> lock(r.mutex);
        if (fn)
            r.by_codelet[cl] = fn;
        else
            r.by_codelet.erase(cl);
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    }
    return 0;
}

extern "C" int hetpu_task_set_gpu_needs(struct starpu_task *task, const struct hetpu_gpu_needs *needs)
{
    if (!task)
        return -EINVAL;
    try {
        auto &r = hetpu::mgb::registry();
        std::lock_guard<std::mutex> lock(r.mutex);
        if (needs)
            r.by_task[task] = *needs;
        else
            r.by_task.erase(task);
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    }
    return 0;
}

extern "C" int hetpu_gpu_needs_of(struct starpu_task *task, struct hetpu_gpu_needs *needs)
{
    if (!task || !needs)
        return -EINVAL;
    return hetpu::mgb::declared_needs(task, false, needs) ? 1 : 0;
}
