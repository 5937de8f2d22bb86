// SPDX-License-Identifier: LGPL-2.1-or-later
// A module that must see every StarPU run hetpu starts (the accounting hook) registers a
// RunObserver here, from a static initializer, instead of being called by name: the runtime
// then depends on no such module, and the module on the runtime only.
#pragma once

struct starpu_sched_policy;

namespace hetpu {

// The policy StarPU runs when none is named (1.3 and 1.4: "lws"): an observer that wraps
// policies must wrap that one too, so the runtime resolves it when no name is given.
constexpr const char *starpu_default_policy = "lws";

struct RunObserver {
    // Whether it takes part in the run about to start (asked once per start).
    bool (*enabled)();
    // The policy StarPU is to run instead of `resolved` (a copy with hooks added, or
    // `resolved` itself); before StarPU starts.
    struct starpu_sched_policy *(*wrap_policy)(struct starpu_sched_policy *resolved);
    // After StarPU started on a wrapped policy.
    void (*run_started)(const char *policy_name);
    // After the run's last starpu_shutdown.
    void (*run_finished)();
    // Instead of run_finished: the start is undone before any work because another rank of
    // the MPI launch could not start; the run is not charged (no ledger row per rank).
    void (*run_abandoned)();
};

// One observer at a time (the last registered wins); `observer` must outlive the process.
void set_run_observer(const RunObserver *observer);
const RunObserver *run_observer();

}  // namespace hetpu
