// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/grn/grn_job.h"

#include <hetpu/mpi.h>

#include <algorithm>
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

// The task of [offset, offset + count) into `output`, a block output of its own.
int fill_into(JobState *s, uint64_t offset, uint64_t count, struct starpu_task *task, std::vector<double> &output)
{
    const SearchInput &in = *s->in;
    const uint32_t lanes = lanes_for(in.genes);
    output.assign(block_output_size(in.genes, lanes), 0.0);
    // Ranks -1: an output no kernel wrote merges as nothing. On a multi-rank run the runner
    // also calls fill_task for whole ranges it moves between ranks, never to run them.
    std::fill(output.begin() + static_cast<std::ptrdiff_t>(output.size() / 2), output.end(), -1.0);
    auto *a = static_cast<BlockArgs *>(std::malloc(sizeof(BlockArgs)));
    if (!a)
        return -ENOMEM;
    *a = BlockArgs{in.genes, in.samples, in.lag, in.k, lanes, in.alpha, offset, count};
    starpu_data_handle_t out;
    starpu_vector_data_register(&out, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(output.data()),
                                static_cast<uint32_t>(output.size()), sizeof(double));
    task->cl = block_codelet();
    task->handles[0] = s->levels;
    task->handles[1] = s->xlogx;
    task->handles[2] = s->hy;
    task->handles[3] = out;
    task->cl_arg = a;
    task->cl_arg_size = sizeof *a;
    task->cl_arg_free = 1;
    return 0;
}

int fill_task(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task)
{
    auto *s = static_cast<JobState *>(arg);
    auto output = std::make_unique<std::vector<double>>();
    if (int rc = fill_into(s, offset, count, task, *output); rc != 0)
        return rc;
    std::lock_guard<std::mutex> lock(s->mutex);
    s->outputs.push_back(std::move(output));
    return 0;
}

// Every block's output is its own already; with backup copies only the kept one's is
// merged, so each subset's score is counted once.
int fill_private(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task, void **output)
{
    auto out = std::make_unique<std::vector<double>>();
    if (int rc = fill_into(static_cast<JobState *>(arg), offset, count, task, *out); rc != 0)
        return rc;
    *output = out.release();
    return 0;
}

void commit(void *arg, uint64_t, uint64_t, void *output)
{
    auto *s = static_cast<JobState *>(arg);
    std::unique_ptr<std::vector<double>> out(static_cast<std::vector<double> *>(output));
    std::lock_guard<std::mutex> lock(s->mutex);
    s->outputs.push_back(std::move(out));
}

void discard(void *output) { delete static_cast<std::vector<double> *>(output); }

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
    job.fill_private = fill_private;
    job.commit = commit;
    job.discard = discard;
    job.block_handle_mask = 1u << 3;
    job.codelet = block_codelet();
    job.arg = &state;
    // Every rank holds the inputs; a block's output is its own buffer: nothing to place,
    // and each rank keeps the outputs of the blocks it ran (folded across ranks below).
    struct hetpu_divisible_placement placement = {};
    struct hetpu_divisible_report report;
    int rc = hetpu_divisible_run_placed(&job, &placement, &report);
    // Only read: nothing to write back. A losing copy may still read them: the handles go
    // once it is done, and the inputs outlive it (hetpu_divisible_wait_copies()).
    starpu_data_unregister_submit(state.levels);
    starpu_data_unregister_submit(state.xlogx);
    starpu_data_unregister_submit(state.hy);
    if (rc != 0)
        return rc;
    out.best.assign(in.genes, Best{});
    for (const auto &o : state.outputs)
        merge_block(out.best, o->data(), in.genes, lanes_for(in.genes));
    if (int size = hetpu_mpi_size(); size > 1) {
        std::vector<Best> all(hetpu_mpi_rank() == 0 ? static_cast<size_t>(size) * in.genes : 0);
        if ((rc = hetpu_mpi_gather(out.best.data(), out.best.size() * sizeof(Best), all.data())) != 0)
            return rc;
        for (size_t i = out.best.size(); i < all.size(); ++i)
            merge_best(out.best[i % in.genes], all[i]);
    }
    apps::add_job(out, report);
    return 0;
}

}  // namespace hetpu::grn
