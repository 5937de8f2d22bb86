// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/grn/grn_job.h"

#include <cstdlib>
#include <memory>
#include <mutex>

#include "apps/common/divisible_workers.h"
#include "apps/grn/grn_codelets.h"

namespace hetpu::grn {

namespace {

struct JobState {
    const SearchInput *in;
    starpu_data_handle_t levels, xlogx, hy;
    std::mutex mutex;  // fill_task runs in completion callbacks, concurrently
    std::vector<std::unique_ptr<std::vector<double>>> outputs;
};

int fill_task(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task)
{
    auto *s = static_cast<JobState *>(arg);
    const SearchInput &in = *s->in;
    const uint32_t lanes = lanes_for(in.genes);
    auto output = std::make_unique<std::vector<double>>(block_output_size(in.genes, lanes));
    auto *a = static_cast<BlockArgs *>(std::malloc(sizeof(BlockArgs)));
    if (!a)
        return -ENOMEM;
    *a = BlockArgs{in.genes, in.samples, in.lag, in.k, lanes, in.alpha, offset, count};
    starpu_data_handle_t out;
    starpu_vector_data_register(&out, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(output->data()),
                                static_cast<uint32_t>(output->size()), sizeof(double));
    task->cl = block_codelet();
    task->handles[0] = s->levels;
    task->handles[1] = s->xlogx;
    task->handles[2] = s->hy;
    task->handles[3] = out;
    task->cl_arg = a;
    task->cl_arg_size = sizeof *a;
    task->cl_arg_free = 1;
    std::lock_guard<std::mutex> lock(s->mutex);
    s->outputs.push_back(std::move(output));
    return 0;
}

}  // namespace

int run_search(const SearchInput &in, uint64_t block, SearchRun &out)
{
    if (static_cast<uint64_t>(in.genes) * in.samples > UINT32_MAX)
        return -EFBIG;  // StarPU 1.3 vectors count elements in 32 bits (checked by main first)
    JobState state;
    state.in = &in;
    starpu_vector_data_register(&state.levels, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(in.levels.data()),
                                static_cast<uint32_t>(in.levels.size()), sizeof(uint8_t));
    starpu_vector_data_register(&state.xlogx, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(in.xlogx.data()),
                                static_cast<uint32_t>(in.xlogx.size()), sizeof(double));
    starpu_vector_data_register(&state.hy, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(in.hy.data()),
                                static_cast<uint32_t>(in.hy.size()), sizeof(double));

    struct hetpu_divisible_job job = {};
    job.name = "grn";
    job.total = subset_count(in.genes, in.k);
    job.granule = 1;
    job.min_block = 1;
    job.default_block = block;
    job.fill_task = fill_task;
    job.block_handle_mask = 1u << 3;
    job.codelet = block_codelet();
    job.arg = &state;
    struct hetpu_divisible_report report;
    int rc = hetpu_divisible_run(&job, &report);
    starpu_data_unregister(state.levels);
    starpu_data_unregister(state.xlogx);
    starpu_data_unregister(state.hy);
    if (rc != 0)
        return rc;
    out.best.assign(in.genes, Best{});
    for (const auto &o : state.outputs)
        merge_block(out.best, o->data(), in.genes, lanes_for(in.genes));
    apps::add_job(out, report);
    return 0;
}

}  // namespace hetpu::grn
