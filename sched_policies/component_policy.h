// SPDX-License-Identifier: LGPL-2.1-or-later
// The StarPU ops table of hetpu's load-balancing policies (and of `hetpu calibrate`): the
// ordinary tasks of a program (a factorisation's kernels, a stencil's updates) are placed
// by StarPU's own scheduling components, in the tree StarPU's dmda-like modular policies
// build (see component_policy.cpp); the blocks of divisible jobs stay with hetpu's planners.
#pragma once

#include <starpu.h>

namespace hetpu {

// unplaced_blocks_first_idle: the blocks that no planner gave a worker go to the first idle
// worker that can run them (greedy), instead of the component tree.
struct starpu_sched_policy component_policy(const char *name, const char *description, bool unplaced_blocks_first_idle);

// Builds that tree for the context and makes it the context's policy data, where StarPU's
// starpu_sched_tree_* functions find it (the MGB policies place their ordinary tasks with it).
void build_component_tree(unsigned sched_ctx_id);

}  // namespace hetpu
