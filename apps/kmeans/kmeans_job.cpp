// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/kmeans/kmeans_job.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "apps/common/divisible_workers.h"
#include "apps/kmeans/kmeans_codelets.h"
#include "apps/kmeans/kmeans_kernels.h"
#include "apps/kmeans/kmeans_lloyd.h"

namespace hetpu::kmeans {

namespace {

struct BlockPartial {
    uint64_t offset;
    std::vector<double> values;
};

struct PassState {
    const Points *p;
    uint32_t k;
    int32_t *labels;
    starpu_data_handle_t centroids;
    std::mutex mutex;  // fill_task runs in completion callbacks, concurrently
    std::vector<std::unique_ptr<BlockPartial>> partials;
};

int fill_task(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task)
{
    auto *s = static_cast<PassState *>(arg);
    const uint32_t d = s->p->d;
    auto block = std::make_unique<BlockPartial>();
    block->offset = offset;
    block->values.assign(partial_size(s->k, d), 0.0);
    auto *args = static_cast<hetpu_kmeans_args *>(std::malloc(sizeof(hetpu_kmeans_args)));
    if (!args)
        return -ENOMEM;
    args->k = s->k;
    args->d = d;
    starpu_data_handle_t x, partial, labels;
    starpu_vector_data_register(&x, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(s->p->x.data() + offset * d),
                                static_cast<uint32_t>(count * d), sizeof(double));
    starpu_vector_data_register(&partial, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(block->values.data()),
                                static_cast<uint32_t>(block->values.size()), sizeof(double));
    starpu_vector_data_register(&labels, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(s->labels + offset),
                                static_cast<uint32_t>(count), sizeof(int32_t));
    task->cl = assign_codelet();
    task->handles[0] = x;
    task->handles[1] = s->centroids;
    task->handles[2] = partial;
    task->handles[3] = labels;
    task->cl_arg = args;
    task->cl_arg_size = sizeof *args;
    task->cl_arg_free = 1;
    std::lock_guard<std::mutex> lock(s->mutex);
    s->partials.push_back(std::move(block));
    return 0;
}

}  // namespace

int assignment_pass(const Points &p, uint32_t k, uint64_t block, const std::vector<double> &centroids,
                    std::vector<int32_t> &labels, std::vector<double> &totals, PassTotals &acc)
{
    const uint32_t d = p.d;
    if (static_cast<uint64_t>(k) * d + k + 1 > UINT32_MAX || p.n * d > UINT32_MAX)
        return -EFBIG;  // StarPU 1.3 vectors count elements in 32 bits (checked by main first)
    PassState state;
    state.p = &p;
    state.k = k;
    state.labels = labels.data();
    starpu_vector_data_register(&state.centroids, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(centroids.data()),
                                static_cast<uint32_t>(centroids.size()), sizeof(double));

    struct hetpu_divisible_job job = {};
    job.name = "kmeans";
    job.total = p.n;
    job.granule = 1;
    job.min_block = 1;
    job.default_block = block;
    job.fill_task = fill_task;
    job.block_handle_mask = (1u << 0) | (1u << 2) | (1u << 3);
    job.codelet = assign_codelet();
    job.arg = &state;
    struct hetpu_divisible_report report;
    int rc = hetpu_divisible_run(&job, &report);
    starpu_data_unregister(state.centroids);
    if (rc != 0)
        return rc;

    // Reduce in point order: the result depends on the block boundaries only, never on
    // which worker finished first.
    std::sort(state.partials.begin(), state.partials.end(),
              [](const auto &a, const auto &b) { return a->offset < b->offset; });
    std::fill(totals.begin(), totals.end(), 0.0);
    for (const auto &b : state.partials)
        for (size_t i = 0; i < totals.size(); ++i)
            totals[i] += b->values[i];

    apps::add_job(acc, report);
    ++acc.jobs;
    return 0;
}

}  // namespace hetpu::kmeans
