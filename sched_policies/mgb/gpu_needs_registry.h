// SPDX-License-Identifier: LGPL-2.1-or-later
// The scheduler's side of include/hetpu/gpu_needs.h.
#pragma once

#include <hetpu/gpu_needs.h>

namespace hetpu::mgb {

// The task's declared needs (per task, else its codelet's callback); false and zeroed when
// none. consume: forget the per-task entry (the scheduler reads it once per execution).
bool declared_needs(struct starpu_task *task, bool consume, struct hetpu_gpu_needs *needs);

}  // namespace hetpu::mgb
