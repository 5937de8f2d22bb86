// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU's workers held off new tasks while an application thread submits a job's first
// blocks, so that those blocks start together once all are queued.
#pragma once

#include <starpu.h>

#include <cstddef>
#include <cstdlib>

#include "common/settings.h"

namespace hetpu {

// Why: StarPU's drivers poll (stock builds define STARPU_NON_BLOCKING_DRIVERS), so an idle
// worker keeps its core busy. Where the workers fill the node, as StarPU's default does
// (a CPU worker per core beside each GPU's driver thread), the submitting thread shares a
// core with a polling worker and the kernel runs it in slices of several milliseconds.
// On one H200 beside 15 CPU workers, the 16 blocks of a k-means pass planned to end
// together at 14 ms were submitted over 5-15 ms, in bursts between such slices, and the
// last ones set the end of the pass. A paused worker waits on a condition instead
// (starpu_pause), which leaves the cores to the submission; running tasks are not
// interrupted, and starpu_resume wakes every worker at once.
//
// Not paused: from a worker (a completion callback submits on its own core), for a single
// block, or when submission may wait for tasks to end (STARPU_LIMIT_MAX_SUBMITTED_TASKS
// makes starpu_task_submit wait for submitted tasks to finish, which paused workers would
// never do). A synchronous task must end() the pause before it is submitted.
class WorkersPausedForSubmission {
public:
    explicit WorkersPausedForSubmission(size_t blocks)
        : paused_(blocks > 1 && starpu_worker_get_id() < 0 && !process_env("STARPU_LIMIT_MAX_SUBMITTED_TASKS"))
    {
        if (paused_)
            starpu_pause();
    }
    ~WorkersPausedForSubmission() { end(); }
    WorkersPausedForSubmission(const WorkersPausedForSubmission &) = delete;
    WorkersPausedForSubmission &operator=(const WorkersPausedForSubmission &) = delete;

    void end()
    {
        if (paused_)
            starpu_resume();
        paused_ = false;
    }

private:
    bool paused_;
};

}  // namespace hetpu
