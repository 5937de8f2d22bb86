/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hetpu: StarPU extension modules for heterogeneous nodes.
 *
 * Start StarPU through hetpu_init() instead of starpu_init() and the policy named in
 * STARPU_SCHED may be one of hetpu's (plb-hac, greedy, ...) as well as one of StarPU's.
 * All functions return 0 or a negative errno value unless documented otherwise. */
#ifndef HETPU_HETPU_H
#define HETPU_HETPU_H

#include <starpu.h>

#include "hetpu/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Returned (positive) by hetpu_init() when STARPU_SCHED=help printed the policy list and
 * StarPU was therefore not started; the caller should exit successfully. */
#define HETPU_INIT_HELP_SHOWN 1

/* Start StarPU with the policy named by STARPU_SCHED (or conf->sched_policy_name, or
 * conf->sched_policy, in that order of precedence; StarPU's default when none is set).
 * hetpu resolves the name itself and hides STARPU_SCHED from StarPU, so the resolved
 * policy is the one used. conf may be NULL. Returns 0, HETPU_INIT_HELP_SHOWN, -EINVAL for
 * an unknown policy name (the valid names are printed on stderr), -EALREADY if hetpu
 * already started StarPU, or starpu_init()'s error (-ENODEV: no worker). */
int hetpu_init(struct starpu_conf *conf);

/* Stop StarPU started by hetpu_init(). Safe to call when hetpu_init() failed. */
void hetpu_shutdown(void);

/* Name of the policy in use ("greedy", "dmda", ...); NULL before hetpu_init(). */
const char *hetpu_policy_name(void);

/* Nonzero when the policy in use is one of hetpu's own. */
int hetpu_policy_is_hetpu(void);

/* Print every policy hetpu can start (hetpu's and StarPU's) with a one-line description. */
void hetpu_print_policies(FILE *out);

/* Describe the workers of the running StarPU, e.g. "1 CPU + 1 OpenCL worker", into buf. */
int hetpu_describe_workers(char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
