// SPDX-License-Identifier: LGPL-2.1-or-later
// The codelet a withdrawn block runs instead of its own (BlockDispatcher::take): the same
// buffers and access modes, so StarPU's data bookkeeping is what it planned at submission,
// and a function on every CPU, CUDA and OpenCL implementation that does nothing. It has no
// performance or energy model: a block that ran nothing must not teach StarPU's history
// that its size is free. StarPU glue.
#pragma once

#include <starpu.h>

#include <map>
#include <memory>

namespace hetpu {

class IdleCodelets {
public:
    // The idle twin of `cl` for a task about to run on `worker`, or null where the worker's
    // kind has no idle function here (the block then runs in full, into output thrown away).
    // Not thread-safe: callers serialize (the run's mutex).
    struct starpu_codelet *twin_of(const struct starpu_codelet *cl, int worker);

private:
    std::map<const struct starpu_codelet *, std::unique_ptr<struct starpu_codelet>> twins_;
};

}  // namespace hetpu
