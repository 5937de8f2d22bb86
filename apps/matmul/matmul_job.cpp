// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/matmul/matmul_job.h"

#include <hetpu/hetpu.h>

#include "apps/matmul/matmul_codelets.h"

namespace hetpu::matmul {

namespace {

template <typename T> struct JobState {
    Problem<T> *p;
    starpu_data_handle_t a;
    struct starpu_codelet *cl;
};

// Block [offset, offset + count) of columns: in column-major storage the columns of B
// (k x count, ld k) and of C (m x count, ld m) are each one contiguous slice, registered
// as independent handles (blocks never overlap). The runner unregisters them.
template <typename T> int fill_task(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task)
{
    auto *s = static_cast<JobState<T> *>(arg);
    Problem<T> &p = *s->p;
    starpu_data_handle_t b, c;
    starpu_matrix_data_register(&b, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(p.b.data() + offset * p.k),
                                static_cast<uint32_t>(p.k), static_cast<uint32_t>(p.k), static_cast<uint32_t>(count),
                                sizeof(T));
    starpu_matrix_data_register(&c, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(p.c.data() + offset * p.m),
                                static_cast<uint32_t>(p.m), static_cast<uint32_t>(p.m), static_cast<uint32_t>(count),
                                sizeof(T));
    task->cl = s->cl;
    task->handles[0] = s->a;
    task->handles[1] = b;
    task->handles[2] = c;
    return 0;
}

}  // namespace

template <typename T> int run_once(Problem<T> &p, const Options &options, struct hetpu_divisible_report *out)
{
    const Precision precision = sizeof(T) == sizeof(float) ? Precision::Single : Precision::Double;
    JobState<T> state{&p, nullptr, codelet(precision)};
    starpu_matrix_data_register(&state.a, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(p.a.data()),
                                static_cast<uint32_t>(p.m), static_cast<uint32_t>(p.m), static_cast<uint32_t>(p.k),
                                sizeof(T));

    struct hetpu_divisible_job job = {};
    job.name = "matmul";
    job.total = p.n;
    job.granule = options.granule;
    job.min_block = options.granule;
    job.default_block = options.block;
    job.fill_task = fill_task<T>;
    job.block_handle_mask = (1u << 1) | (1u << 2);  // B and C blocks: one handle per block
    job.codelet = state.cl;
    job.arg = &state;
    int rc = hetpu_divisible_run(&job, out);

    starpu_data_unregister(state.a);  // A is only read: nothing to write back
    return rc;
}

template int run_once<float>(Problem<float> &, const Options &, struct hetpu_divisible_report *);
template int run_once<double>(Problem<double> &, const Options &, struct hetpu_divisible_report *);

}  // namespace hetpu::matmul
