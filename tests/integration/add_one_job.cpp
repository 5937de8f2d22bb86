// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tests/integration/add_one_job.h"

#include <cstring>

#include "tests/integration/add_one_codelet.h"

std::atomic<int> add_one_live_outputs{0};
std::atomic<int> add_one_discarded{0};

namespace {

struct PrivateRange {
    std::vector<float> y;
};

int fill_plain(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task)
{
    auto *job = static_cast<AddOneJob *>(arg);
    {
        std::lock_guard<std::mutex> lock(job->mutex);
        ++job->filled_plain;
    }
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(job->y.data() + offset), count,
                                sizeof(float));
    task->cl = job->codelet;
    task->handles[0] = h;
    return 0;
}

int fill_private(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task, void **output)
{
    auto *job = static_cast<AddOneJob *>(arg);
    auto *out = new PrivateRange;
    {
        std::lock_guard<std::mutex> lock(job->mutex);
        ++job->filled_private;
        out->y.assign(job->y.begin() + static_cast<std::ptrdiff_t>(offset),
                      job->y.begin() + static_cast<std::ptrdiff_t>(offset + count));
    }
    ++add_one_live_outputs;
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(out->y.data()), count, sizeof(float));
    task->cl = job->codelet;
    task->handles[0] = h;
    *output = out;
    return 0;
}

void commit(void *arg, uint64_t offset, uint64_t, void *output)
{
    auto *job = static_cast<AddOneJob *>(arg);
    auto *out = static_cast<PrivateRange *>(output);
    {
        std::lock_guard<std::mutex> lock(job->mutex);
        std::memcpy(job->y.data() + offset, out->y.data(), out->y.size() * sizeof(float));
        job->committed.insert(offset);
    }
    delete out;
    --add_one_live_outputs;
}

void discard(void *output)
{
    delete static_cast<PrivateRange *>(output);
    --add_one_live_outputs;
    ++add_one_discarded;
}

}  // namespace

hetpu_divisible_job add_one_job(AddOneJob &data, uint64_t total, bool opt_in, const char *name, uint64_t default_block)
{
    if (!data.codelet)
        data.codelet = &add_one_codelet;
    data.y.assign(total, 0.0f);
    hetpu_divisible_job job = {};
    job.name = name;
    job.total = total;
    job.granule = 16;
    job.default_block = default_block;
    job.fill_task = fill_plain;
    job.block_handle_mask = 1u;
    job.codelet = data.codelet;
    job.arg = &data;
    if (opt_in) {
        job.fill_private = fill_private;
        job.commit = commit;
        job.discard = discard;
    }
    return job;
}
