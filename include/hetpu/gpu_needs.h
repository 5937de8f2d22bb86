/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hetpu GPU task needs: what an accelerator task asks of a device, for the MGB policies
 * (mgb, mgb-exact, sa, cg), after C. Chen, C. Porter, S. Pande, "Effective GPU Sharing
 * Under Compiler Guidance". The policies never place a task on a device that cannot hold
 * it, and balance compute load (warps) across devices.
 *
 * A task's device memory need is always the sum of the sizes of its data handles (a handle
 * shared by several tasks on one device counts once while any of them is queued or running
 * there) plus the scratch bytes declared here (cuBLAS/CLBlast workspaces, buffers the kernel
 * allocates itself). Its compute need is its launch configuration; a task that declares
 * none is assumed to fill the whole device (one block of the SM's maximum warps on every
 * SM), which is safe: it never shares a device under mgb-exact and weighs a full device in
 * mgb's load balance.
 *
 * Declare needs per codelet with a callback (computed from the task's data sizes when the
 * task is scheduled) or per task (for the next execution of that task). Per-task needs
 * win over the codelet's callback. All functions return 0 or a negative errno value. */
#ifndef HETPU_GPU_NEEDS_H
#define HETPU_GPU_NEEDS_H

#include <stddef.h>
#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hetpu_gpu_needs {
    size_t scratch_bytes;          /* device memory beyond the task's data handles */
    unsigned blocks;               /* thread blocks (OpenCL: work-groups) of its largest kernel; 0: unknown */
    unsigned threads_per_block;    /* threads (work-items) per block */
    unsigned shared_mem_per_block; /* shared (OpenCL: local) memory per block, bytes */
};

/* Fills *needs for task (zeroed before the call). Called by the scheduler from the thread
 * that pushes the task; it must not block or submit tasks. */
typedef void (*hetpu_gpu_needs_fn)(struct starpu_task *task, struct hetpu_gpu_needs *needs);

/* Every task of cl gets its needs from fn (NULL removes it). -EINVAL: cl is NULL. */
int hetpu_codelet_set_gpu_needs(struct starpu_codelet *cl, hetpu_gpu_needs_fn fn);

/* The next execution of task has these needs (NULL removes them). Set it before each
 * submission of a task that is submitted several times. -EINVAL: task is NULL. */
int hetpu_task_set_gpu_needs(struct starpu_task *task, const struct hetpu_gpu_needs *needs);

/* The needs the scheduler will use for task: its own, else its codelet's callback, else
 * zero (unknown). Returns 1 when declared, 0 when not, -EINVAL for NULL arguments. */
int hetpu_gpu_needs_of(struct starpu_task *task, struct hetpu_gpu_needs *needs);

#ifdef __cplusplus
}
#endif

#endif
