// SPDX-License-Identifier: LGPL-2.1-or-later
// The differences between the StarPU series hetpu builds against, StarPU 1.3 (Debian 12's
// 1.3.10, ./run check) and 1.4 (1.4.10 with CUDA, ./run cuda-check), in one place: code
// elsewhere includes this header instead of testing StarPU's version itself. C++ only.
//
// What hetpu uses is otherwise the same in both (checked against 1.4.10): the policy ops
// table (1.4 drops pop_every_task, which hetpu never set, and adds `prefetches`, left 0 so
// StarPU keeps prefetching for hetpu's policies), struct starpu_disk_ops (same fields; 1.4's
// starpu_disk.h gains the extern "C" that 1.3's lacks, see include/hetpu/ckpt.h), device
// memory limits (STARPU_LIMIT_<kind>_MEM still beats the per-device variable),
// starpu_pause/starpu_resume, policy selection (tests/integration/starpu_behaviour_test.cpp
// pins these on both). What differs follows.
#pragma once

#include <starpu.h>

#define HETPU_STARPU_AT_LEAST(major, minor)                                                                            \
    (STARPU_MAJOR_VERSION > (major) || (STARPU_MAJOR_VERSION == (major) && STARPU_MINOR_VERSION >= (minor)))

// STARPU_SCHED_LIB=lib.so (1.4): StarPU dlopens the library and asks its
// starpu_get_sched_lib_policy(name) for a policy by name (starpu_get_sched_lib_policies()
// for STARPU_SCHED=help). 1.4's starpu_scheduler.h declares both; 1.3 has neither the
// mechanism nor the declarations. libhetpu defines them on both (runtime/start/sched_lib_exports.cpp).
#define HETPU_STARPU_HAS_SCHED_LIB HETPU_STARPU_AT_LEAST(1, 4)
#if !HETPU_STARPU_HAS_SCHED_LIB
extern "C" {
struct starpu_sched_policy *starpu_get_sched_lib_policy(const char *name);
struct starpu_sched_policy **starpu_get_sched_lib_policies(void);
}
#endif

// A disk node's measured bandwidth (MB/s) and latency (us) for StarPU's transfer model.
// StarPU's own disk backends record it with _starpu_save_bandwidth_and_latency_disk: 1.3
// exports it (in no public header), 1.4 hides it and has no public replacement. On 1.4 the
// figure is not recorded (returns false): StarPU then predicts no transfer time to or from
// the node, and warns once that no bus model was calibrated for it.
#define HETPU_STARPU_RECORDS_DISK_BANDWIDTH (!HETPU_STARPU_AT_LEAST(1, 4))
#if HETPU_STARPU_RECORDS_DISK_BANDWIDTH
extern "C" void _starpu_save_bandwidth_and_latency_disk(double bandwidth_write, double bandwidth_read,
                                                        double latency_write, double latency_read, unsigned node,
                                                        const char *name);
#endif
inline bool hetpu_starpu_record_disk_bandwidth(double write_mbs, double read_mbs, double write_latency_us,
                                               double read_latency_us, unsigned node, const char *name)
{
#if HETPU_STARPU_RECORDS_DISK_BANDWIDTH
    _starpu_save_bandwidth_and_latency_disk(write_mbs, read_mbs, write_latency_us, read_latency_us, node, name);
    return true;
#else
    (void)write_mbs, (void)read_mbs, (void)write_latency_us, (void)read_latency_us, (void)node, (void)name;
    return false;
#endif
}

// The context StarPU creates at start-up, which runs the policy starpu_init chose: id 0 in
// both series (neither exports a name for it).
#define HETPU_STARPU_INITIAL_SCHED_CTX 0u

// The set of workers under a scheduling component: a pointer in 1.3, a member in 1.4.
#if HETPU_STARPU_AT_LEAST(1, 4)
#define HETPU_COMPONENT_WORKERS(component) (&(component)->workers)
#else
#define HETPU_COMPONENT_WORKERS(component) ((component)->workers)
#endif

// The per-worker priority queues of hetpu's component tree (sched_policies/component_policy.cpp).
// 1.4 has modular-dmdas' shape: every task goes at once to a worker's queue, with no bound
// on its length, and the queue tells the decision when its work will end
// (starpu_sched_component_prio_data::exp, which 1.3 lacks). 1.3's MCT component needs
// bounded queues (modular-heft's 30 tasks each), the tasks they refuse waiting in the
// priority queue above the decision. In both, a priority queue above the decision, as in
// StarPU's own modular policies, holds a task its components refuse for now (an eager
// component with no child ready): a refused push at the root aborts StarPU. A threshold of 0
// is StarPU's "no bound" (an infinite one still refuses once a prediction is infinite).
#if HETPU_STARPU_AT_LEAST(1, 4)
#define HETPU_TREE_QUEUE_TASKS 0u
#define HETPU_TREE_QUEUE_EXP_LEN 0.0
#define HETPU_SET_PRIO_DATA_EXP(data) ((data).exp = 1)
#else
#define HETPU_TREE_QUEUE_TASKS 30u
#define HETPU_TREE_QUEUE_EXP_LEN 1e9  // microseconds of predicted work, as modular-heft
#define HETPU_SET_PRIO_DATA_EXP(data) ((void)(data))
#endif
