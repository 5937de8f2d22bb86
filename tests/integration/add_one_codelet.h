// SPDX-License-Identifier: LGPL-2.1-or-later
// A test codelet with CPU and OpenCL implementations: y[i] += 1 on a vector block.
// Processing a block twice (or never) leaves a value other than 1 behind, so a run
// that covers every element exactly once is easy to check.
#pragma once

#include <starpu.h>

extern struct starpu_codelet add_one_codelet;

// Load the OpenCL program (after StarPU started) / release it (before shutdown).
void add_one_codelet_load();
void add_one_codelet_unload();
