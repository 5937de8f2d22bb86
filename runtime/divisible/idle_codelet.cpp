// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/idle_codelet.h"

namespace hetpu {
namespace {

void run_nothing(void *[], void *) {}

}  // namespace

struct starpu_codelet *IdleCodelets::twin_of(const struct starpu_codelet *cl, int worker)
{
    if (!cl || worker < 0)
        return nullptr;
    switch (starpu_worker_get_type(worker)) {
    case STARPU_CPU_WORKER:
    case STARPU_CUDA_WORKER:
    case STARPU_OPENCL_WORKER: break;
    default: return nullptr;
    }
    std::unique_ptr<struct starpu_codelet> &twin = twins_[cl];
    if (!twin) {
        // A copy of a codelet StarPU has already checked at submission (where, nbuffers,
        // modes, nodes), with only what runs and what is measured replaced.
        twin = std::make_unique<struct starpu_codelet>(*cl);
        for (unsigned i = 0; i < STARPU_MAXIMPLEMENTATIONS; ++i) {
            twin->cpu_funcs[i] = run_nothing;
            twin->cuda_funcs[i] = run_nothing;
            twin->cuda_flags[i] = 0;
            twin->opencl_funcs[i] = run_nothing;
            twin->opencl_flags[i] = 0;
        }
        twin->model = nullptr;
        twin->energy_model = nullptr;
    }
    return twin.get();
}

}  // namespace hetpu
