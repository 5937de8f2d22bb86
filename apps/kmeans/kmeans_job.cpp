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

// Room for a range of another rank's points computed here (HETPU_HOLD_BORROWED).
struct Borrowed {
    uint64_t offset, count;
    std::vector<double> x;
    std::vector<int32_t> labels;
};

struct PassState {
    const PointShare *share;
    uint32_t k;
    int32_t *labels;
    starpu_data_handle_t centroids;
    std::mutex mutex;  // fill_task runs in completion callbacks, concurrently with hold/release
    std::vector<std::unique_ptr<BlockPartial>> partials;
    std::vector<std::unique_ptr<Borrowed>> borrowed;
};

// The memory of points [offset, offset + count): this rank's share, or borrowed room.
bool storage_of(PassState &s, uint64_t offset, uint64_t count, double *&x, int32_t *&labels)
{
    const PointShare &sh = *s.share;
    const uint32_t d = sh.local.d;
    if (offset >= sh.offset && offset + count <= sh.offset + sh.local.n) {
        x = const_cast<double *>(sh.local.x.data()) + (offset - sh.offset) * d;  // read by the codelet only
        labels = s.labels + (offset - sh.offset);
        return true;
    }
    std::lock_guard<std::mutex> lock(s.mutex);
    for (auto &b : s.borrowed)
        if (offset >= b->offset && offset + count <= b->offset + b->count) {
            x = b->x.data() + (offset - b->offset) * d;
            labels = b->labels.data() + (offset - b->offset);
            return true;
        }
    return false;
}

// The assignment task of `count` points at x: its partial sums into `partial`, its labels
// into `labels` (the job's own arrays, or a block's private ones).
int fill_assign(PassState &s, struct starpu_task *task, double *x, uint64_t count, std::vector<double> &partial,
                int32_t *labels)
{
    const uint32_t d = s.share->local.d;
    auto *args = static_cast<hetpu_kmeans_args *>(std::malloc(sizeof(hetpu_kmeans_args)));
    if (!args)
        return -ENOMEM;
    args->k = s.k;
    args->d = d;
    starpu_data_handle_t x_handle, partial_handle, labels_handle;
    starpu_vector_data_register(&x_handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(x),
                                static_cast<uint32_t>(count * d), sizeof(double));
    starpu_vector_data_register(&partial_handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(partial.data()),
                                static_cast<uint32_t>(partial.size()), sizeof(double));
    starpu_vector_data_register(&labels_handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(labels),
                                static_cast<uint32_t>(count), sizeof(int32_t));
    task->cl = assign_codelet();
    task->handles[0] = x_handle;
    task->handles[1] = s.centroids;
    task->handles[2] = partial_handle;
    task->handles[3] = labels_handle;
    task->cl_arg = args;
    task->cl_arg_size = sizeof *args;
    task->cl_arg_free = 1;
    return 0;
}

int fill_task(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task)
{
    auto *s = static_cast<PassState *>(arg);
    const uint32_t d = s->share->local.d;
    double *x = nullptr;
    int32_t *labels_at = nullptr;
    if (!storage_of(*s, offset, count, x, labels_at))
        return -ERANGE;  // the runtime asked for points this rank neither holds nor borrowed
    auto block = std::make_unique<BlockPartial>();
    block->offset = offset;
    block->values.assign(partial_size(s->k, d), 0.0);
    if (int rc = fill_assign(*s, task, x, count, block->values, labels_at); rc != 0)
        return rc;
    std::lock_guard<std::mutex> lock(s->mutex);
    s->partials.push_back(std::move(block));
    return 0;
}

// A block's own labels and partial sums, for a task that may lose to its backup copy (see
// fill_private in hetpu/divisible.h): only the kept one's are counted, once.
struct PrivateBlock {
    std::unique_ptr<BlockPartial> partial;
    std::vector<int32_t> labels;
};

int fill_private(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task, void **output)
{
    auto *s = static_cast<PassState *>(arg);
    const uint32_t d = s->share->local.d;
    double *x = nullptr;
    int32_t *labels_at = nullptr;
    if (!storage_of(*s, offset, count, x, labels_at))
        return -ERANGE;
    auto out = std::make_unique<PrivateBlock>();
    out->partial = std::make_unique<BlockPartial>();
    out->partial->offset = offset;
    out->partial->values.assign(partial_size(s->k, d), 0.0);
    out->labels.assign(count, -1);
    if (int rc = fill_assign(*s, task, x, count, out->partial->values, out->labels.data()); rc != 0)
        return rc;
    *output = out.release();
    return 0;
}

void commit(void *arg, uint64_t offset, uint64_t count, void *output)
{
    auto *s = static_cast<PassState *>(arg);
    std::unique_ptr<PrivateBlock> out(static_cast<PrivateBlock *>(output));
    double *x = nullptr;
    int32_t *labels_at = nullptr;
    if (storage_of(*s, offset, count, x, labels_at))  // checked by fill_private
        std::copy(out->labels.begin(), out->labels.end(), labels_at);
    std::lock_guard<std::mutex> lock(s->mutex);
    s->partials.push_back(std::move(out->partial));
}

void discard(void *output) { delete static_cast<PrivateBlock *>(output); }

int hold(void *arg, uint64_t offset, uint64_t count, enum hetpu_hold_kind kind)
{
    auto *s = static_cast<PassState *>(arg);
    if (kind != HETPU_HOLD_BORROWED)
        return -EINVAL;  // the share is held before the first pass (held_offset/held_count)
    try {
        auto b = std::make_unique<Borrowed>();
        b->offset = offset;
        b->count = count;
        b->x.resize(count * s->share->local.d);
        b->labels.assign(count, -1);
        std::lock_guard<std::mutex> lock(s->mutex);
        s->borrowed.push_back(std::move(b));
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    }
    return 0;
}

void release(void *arg, uint64_t offset, uint64_t count)
{
    auto *s = static_cast<PassState *>(arg);
    std::lock_guard<std::mutex> lock(s->mutex);
    for (auto it = s->borrowed.begin(); it != s->borrowed.end(); ++it)
        if ((*it)->offset == offset && (*it)->count == count) {
            s->borrowed.erase(it);
            return;
        }
}

}  // namespace

struct hetpu_divisible_job pass_job_shape(uint64_t n)
{
    struct hetpu_divisible_job job = {};
    job.name = "kmeans";
    job.total = n;
    job.granule = 1;
    job.min_block = 1;
    job.block_handle_mask = (1u << 0) | (1u << 2) | (1u << 3);
    job.codelet = assign_codelet();
    return job;
}

int assignment_pass(const PointShare &share, uint32_t k, uint64_t block, const std::vector<double> &centroids,
                    std::vector<int32_t> &labels, std::vector<double> &totals, PassTotals &acc,
                    struct hetpu_divisible_report *report_out)
{
    const Points &p = share.local;
    const uint32_t d = p.d;
    if (static_cast<uint64_t>(k) * d + k + 1 > UINT32_MAX || share.total * d > UINT32_MAX)
        return -EFBIG;  // StarPU 1.3 vectors count elements in 32 bits (checked by main first)
    PassState state;
    state.share = &share;
    state.k = k;
    state.labels = labels.data();
    starpu_vector_data_register(&state.centroids, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(centroids.data()),
                                static_cast<uint32_t>(centroids.size()), sizeof(double));

    struct hetpu_divisible_job job = pass_job_shape(share.total);
    job.default_block = block;
    job.fill_task = fill_task;
    job.fill_private = fill_private;
    job.commit = commit;
    job.discard = discard;
    job.arg = &state;
    struct hetpu_divisible_placement placement = {};
    placement.hold = hold;
    placement.release = release;
    placement.bytes_per_element = d * sizeof(double) + sizeof(int32_t);  // points in, labels back
    placement.arg = &state;
    // The points stay where they were read or generated, from pass to pass.
    placement.held_offset = share.offset;
    placement.held_count = p.n;
    struct hetpu_divisible_report report;
    int rc = hetpu_divisible_run_placed(&job, &placement, &report);
    // A losing copy may still read the centroids: the handle goes once it is done, and the
    // caller keeps them until the copies have ended (hetpu_divisible_wait_copies()).
    starpu_data_unregister_submit(state.centroids);
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
    if (report_out)
        *report_out = report;
    return 0;
}

}  // namespace hetpu::kmeans
