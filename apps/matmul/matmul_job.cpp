// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/matmul/matmul_job.h"

#include <hetpu/hetpu.h>
#include <hetpu/mpi.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <new>

#include "apps/common/pinned_host_memory.h"
#include "apps/matmul/matmul_codelets.h"

namespace hetpu::matmul {

namespace {

template <typename T> struct JobState {
    uint64_t m, k;
    starpu_data_handle_t a;
    struct starpu_codelet *cl;
    // Where column j of B and C lives: the whole matrices, or the columns a rank holds.
    std::function<T *(uint64_t)> b_col, c_col;
};

// Block [offset, offset + count) of columns: in column-major storage the columns of B
// (k x count, ld k) and of C (m x count, ld m) are each one contiguous slice, registered
// as independent handles (blocks never overlap). The runner unregisters them.
template <typename T> int fill_task(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task)
{
    auto *s = static_cast<JobState<T> *>(arg);
    T *b_data = s->b_col(offset), *c_data = s->c_col(offset);
    // A block never spans two held ranges (the runner cuts blocks inside one), so its
    // last column is in the same place as its first.
    if (!b_data || !c_data || s->b_col(offset + count - 1) != b_data + (count - 1) * s->k)
        return -EFAULT;
    starpu_data_handle_t b, c;
    starpu_matrix_data_register(&b, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(b_data), static_cast<uint32_t>(s->k),
                                static_cast<uint32_t>(s->k), static_cast<uint32_t>(count), sizeof(T));
    starpu_matrix_data_register(&c, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(c_data), static_cast<uint32_t>(s->m),
                                static_cast<uint32_t>(s->m), static_cast<uint32_t>(count), sizeof(T));
    task->cl = s->cl;
    task->handles[0] = s->a;
    task->handles[1] = b;
    task->handles[2] = c;
    return 0;
}

// A block's own C columns, for a task that may lose to its backup copy (see fill_private in
// hetpu/divisible.h): only the kept one is copied into C, so C is written once.
template <typename T> struct PrivateColumns {
    std::unique_ptr<T[]> c;
    size_t size;
};

template <typename T>
int fill_private(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task, void **output)
{
    auto *s = static_cast<JobState<T> *>(arg);
    T *b_data = s->b_col(offset);
    if (!b_data || s->b_col(offset + count - 1) != b_data + (count - 1) * s->k)
        return -EFAULT;
    auto out = std::make_unique<PrivateColumns<T>>();
    out->size = s->m * count;
    out->c.reset(new (std::nothrow) T[out->size]);  // written whole by the GEMM (beta 0)
    if (!out->c)
        return -ENOMEM;
    starpu_data_handle_t b, c;
    starpu_matrix_data_register(&b, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(b_data), static_cast<uint32_t>(s->k),
                                static_cast<uint32_t>(s->k), static_cast<uint32_t>(count), sizeof(T));
    starpu_matrix_data_register(&c, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(out->c.get()),
                                static_cast<uint32_t>(s->m), static_cast<uint32_t>(s->m), static_cast<uint32_t>(count),
                                sizeof(T));
    task->cl = s->cl;
    task->handles[0] = s->a;
    task->handles[1] = b;
    task->handles[2] = c;
    *output = out.release();
    return 0;
}

template <typename T> void commit(void *arg, uint64_t offset, uint64_t, void *output)
{
    auto *s = static_cast<JobState<T> *>(arg);
    std::unique_ptr<PrivateColumns<T>> out(static_cast<PrivateColumns<T> *>(output));
    // fill_private checked that B's columns are contiguous; C's are held alike.
    std::memcpy(s->c_col(offset), out->c.get(), out->size * sizeof(T));
}

template <typename T> void discard(void *output) { delete static_cast<PrivateColumns<T> *>(output); }

template <typename T>
int run_job(JobState<T> &state, const T *a, uint64_t n, const Options &options,
            const struct hetpu_divisible_placement *placement, struct hetpu_divisible_report *out)
{
    starpu_matrix_data_register(&state.a, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(a),
                                static_cast<uint32_t>(state.m), static_cast<uint32_t>(state.m),
                                static_cast<uint32_t>(state.k), sizeof(T));
    struct hetpu_divisible_job job = {};
    job.name = "matmul";
    job.total = n;
    job.granule = options.granule;
    job.min_block = options.granule;
    job.default_block = options.block;
    job.fill_task = fill_task<T>;
    job.block_handle_mask = (1u << 1) | (1u << 2);  // B and C blocks: one handle per block
    job.codelet = state.cl;
    job.arg = &state;
    job.fill_private = fill_private<T>;
    job.commit = commit<T>;
    job.discard = discard<T>;
    int rc = placement ? hetpu_divisible_run_placed(&job, placement, out) : hetpu_divisible_run(&job, out);
    // A is only read: nothing to write back. A losing copy may still read it: the handle
    // goes once it is done, and A's memory outlives it (hetpu_divisible_wait_copies()).
    starpu_data_unregister_submit(state.a);
    return rc;
}

// A rank's columns, page-locked while held (StarPU's copies to a GPU then overlap).
template <typename T> struct HeldColumns {
    ColumnStore<T> *store;
    std::map<uint64_t, std::pair<uint64_t, std::unique_ptr<apps::PinnedHostMemory[]>>> pinned;  // offset -> count, B+C

    void unpin_overlapping(uint64_t offset, uint64_t count)
    {
        for (auto it = pinned.begin(); it != pinned.end();) {
            const bool same = it->first == offset && it->second.first == count;
            const bool overlaps = it->first < offset + count && offset < it->first + it->second.first;
            it = overlaps && !same ? pinned.erase(it) : std::next(it);
        }
    }
};

template <typename T> int hold_columns(void *arg, uint64_t offset, uint64_t count, enum hetpu_hold_kind kind)
{
    auto *held = static_cast<HeldColumns<T> *>(arg);
    held->unpin_overlapping(offset, count);
    try {
        held->store->hold(offset, count, kind == HETPU_HOLD_SHARE);
        if (!held->pinned.count(offset)) {
            auto pins = std::unique_ptr<apps::PinnedHostMemory[]>(
                new apps::PinnedHostMemory[2]{{held->store->b_col(offset), count * held->store->k * sizeof(T)},
                                              {held->store->c_col(offset), count * held->store->m * sizeof(T)}});
            held->pinned[offset] = {count, std::move(pins)};
        }
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    }
    return 0;
}

template <typename T> void release_columns(void *arg, uint64_t offset, uint64_t count)
{
    auto *held = static_cast<HeldColumns<T> *>(arg);
    held->pinned.erase(offset);
    held->store->release(offset, count);
}

}  // namespace

template <typename T> int run_once(Problem<T> &p, const Options &options, struct hetpu_divisible_report *out)
{
    const Precision precision = sizeof(T) == sizeof(float) ? Precision::Single : Precision::Double;
    JobState<T> state{p.m,
                      p.k,
                      nullptr,
                      codelet(precision),
                      [&p](uint64_t j) { return p.b.data() + j * p.k; },
                      [&p](uint64_t j) { return p.c.data() + j * p.m; }};
    return run_job(state, p.a.data(), p.n, options, nullptr, out);
}

template <typename T> int run_owned(ColumnStore<T> &store, const Options &options, struct hetpu_divisible_report *out)
{
    const Precision precision = sizeof(T) == sizeof(float) ? Precision::Single : Precision::Double;
    JobState<T> state{store.m,
                      store.k,
                      nullptr,
                      codelet(precision),
                      [&store](uint64_t j) { return store.b_col(j); },
                      [&store](uint64_t j) { return store.c_col(j); }};
    HeldColumns<T> held{&store, {}};
    struct hetpu_divisible_placement placement = {};
    placement.hold = hold_columns<T>;
    placement.release = release_columns<T>;
    placement.bytes_per_element = (store.k + store.m) * sizeof(T);  // a column of B in, of C back
    placement.arg = &held;
    return run_job(state, store.a.data(), store.n, options, &placement, out);
}

template int run_once<float>(Problem<float> &, const Options &, struct hetpu_divisible_report *);
template int run_once<double>(Problem<double> &, const Options &, struct hetpu_divisible_report *);
template int run_owned<float>(ColumnStore<float> &, const Options &, struct hetpu_divisible_report *);
template int run_owned<double>(ColumnStore<double> &, const Options &, struct hetpu_divisible_report *);

}  // namespace hetpu::matmul
