// SPDX-License-Identifier: LGPL-2.1-or-later
// Starting StarPU under a policy chosen by name: shared by hetpu_init() and by the
// preload library's starpu_init()/starpu_initialize() interposers.
#pragma once

#include <starpu.h>

#include <string>

#include "runtime/start/policy_registry.h"

namespace hetpu {

using InitializeFn = int (*)(struct starpu_conf *conf, int *argc, char ***argv);

// What to do when STARPU_SCHED=help: hetpu_init() returns HETPU_INIT_HELP_SHOWN; an
// unmodified program under the preload library exits 0 after the list (it cannot know
// about hetpu's return code, and StarPU would otherwise start with a default policy).
enum class HelpAction { Return, Exit };

// The policy a start asks for, and where it was named: STARPU_SCHED, else
// conf->sched_policy_name (conf may be null); "" when neither names one. The one place that
// reads STARPU_SCHED.
struct RequestedPolicy {
    std::string name;
    const char *source;
};
RequestedPolicy requested_policy(const struct starpu_conf *conf);

// Resolve the requested policy (STARPU_SCHED, then conf->sched_policy_name, then
// conf->sched_policy), hide STARPU_SCHED from StarPU, call `initialize` with a copy of
// *conf (conf may be NULL) that names the resolved policy struct. Concurrent calls are
// serialised: the first starts StarPU, the others then see it running. Returns 0,
// HETPU_INIT_HELP_SHOWN, -EINVAL (unknown name, list printed; or an invalid HETPU_* setting), -EALREADY or initialize's error.
// What a call does when StarPU already runs (started by an earlier or a concurrent call):
// hetpu_init() refuses with -EALREADY; starpu_initialize() under the preload library
// forwards to StarPU, which counts initialisations, as an unmodified program expects.
enum class WhenRunning { Refuse, Forward };

int start_starpu(struct starpu_conf *conf, int *argc, char ***argv, InitializeFn initialize, HelpAction help,
                 WhenRunning when_running);

// Why the last failed start_starpu() on this thread failed, in a few words for a one-line
// report ("unknown policy 'x' (STARPU_SCHED)", "no usable worker ..."); the full message was
// printed when it failed. hetpu_init_mpi() sends it to every rank.
std::string last_start_failure();

// True while start_starpu() runs on this thread: the preload interposer then forwards
// straight to StarPU instead of resolving a second time.
bool inside_start_starpu();

// hetpu_shutdown() must stop StarPU started by hetpu_init_mpi() as it does for hetpu_init().
void mark_started_by_hetpu_init();

// StarPU started but is stopped again before any work (another rank could not start):
// the next note_starpu_shutdown() tells the run observer the run is abandoned, not finished.
void abandon_run();

// One starpu_shutdown() happened; at the last one (matching the starts) forget the running policy.
void note_starpu_shutdown();

// The policy StarPU is running, as resolved at start; nullptr when not started.
const RegisteredPolicy *running_hetpu_policy();

}  // namespace hetpu
