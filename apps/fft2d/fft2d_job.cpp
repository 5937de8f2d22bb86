// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/fft2d/fft2d_job.h"

#include <hetpu/hetpu.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <new>

#include "apps/fft2d/fft2d_codelets.h"

namespace hetpu::fft2d {

namespace {

struct Phase {
    Complex *matrix;  // rows x length, row-major
    uint64_t length;  // row length: the FFT size, passed to the codelet as cl_arg
};

// Rows [offset, offset + count) are one contiguous slice, registered as an independent
// vector (blocks never overlap); the runner unregisters it, writing the rows back.
int fill_task(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task)
{
    auto *ph = static_cast<Phase *>(arg);
    starpu_data_handle_t rows;
    starpu_vector_data_register(&rows, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(ph->matrix + offset * ph->length),
                                static_cast<uint32_t>(count * ph->length), sizeof(Complex));
    task->cl = codelet();
    task->handles[0] = rows;
    task->cl_arg = &ph->length;
    return 0;
}

// A block's own copy of its rows, transformed in place, for a task that may lose to its
// backup copy (see fill_private in hetpu/divisible.h): the matrix holds the input until the
// kept copy's rows are copied back, once. The task's row length lives here too: a losing
// copy may still run after the phase has returned.
struct PrivateRows {
    std::unique_ptr<Complex[]> rows;
    size_t size;
    uint64_t length;
};

int fill_private(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task, void **output)
{
    auto *ph = static_cast<Phase *>(arg);
    auto out = std::make_unique<PrivateRows>();
    out->size = count * ph->length;
    out->length = ph->length;
    out->rows.reset(new (std::nothrow) Complex[out->size]);
    if (!out->rows)
        return -ENOMEM;
    std::memcpy(out->rows.get(), ph->matrix + offset * ph->length, out->size * sizeof(Complex));
    starpu_data_handle_t rows;
    starpu_vector_data_register(&rows, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(out->rows.get()),
                                static_cast<uint32_t>(out->size), sizeof(Complex));
    task->cl = codelet();
    task->handles[0] = rows;
    task->cl_arg = &out->length;
    *output = out.release();
    return 0;
}

void commit(void *arg, uint64_t offset, uint64_t, void *output)
{
    auto *ph = static_cast<Phase *>(arg);
    std::unique_ptr<PrivateRows> out(static_cast<PrivateRows *>(output));
    std::memcpy(ph->matrix + offset * ph->length, out->rows.get(), out->size * sizeof(Complex));
}

void discard(void *output) { delete static_cast<PrivateRows *>(output); }

int run_phase(Complex *matrix, uint64_t rows, uint64_t length, const Options &options,
              struct hetpu_divisible_report *out)
{
    Phase phase{matrix, length};
    struct hetpu_divisible_job job = {};
    job.name = "fft2d";
    job.total = rows;
    job.granule = 1;
    job.min_block = 1;
    job.default_block = options.block;
    job.fill_task = fill_task;
    job.fill_private = fill_private;
    job.commit = commit;
    job.discard = discard;
    job.block_handle_mask = 1u << 0;
    job.codelet = codelet();
    job.arg = &phase;
    return hetpu_divisible_run(&job, out);
}

// Adds phase b's per-worker figures into a (same workers, same order: both phases run on
// one StarPU with one codelet).
void accumulate(struct hetpu_divisible_report &a, const struct hetpu_divisible_report &b)
{
    a.elements += b.elements;
    a.blocks += b.blocks;
    for (unsigned i = 0; i < b.nworkers; ++i) {
        unsigned j = 0;
        while (j < a.nworkers && a.workers[j].workerid != b.workers[i].workerid)
            ++j;
        if (j == a.nworkers) {
            if (a.nworkers >= STARPU_NMAXWORKERS)
                continue;
            a.workers[a.nworkers++] = b.workers[i];
            continue;
        }
        a.workers[j].blocks += b.workers[i].blocks;
        a.workers[j].elements += b.workers[i].elements;
        a.workers[j].busy_s += b.workers[i].busy_s;
        a.workers[j].transfer_s += b.workers[i].transfer_s;
    }
}

}  // namespace

int run_once(Problem &p, const Options &options, struct hetpu_divisible_report *out)
{
    static struct hetpu_divisible_report rows_report, cols_report;  // large: not on the stack
    const double t0 = starpu_timing_now();
    int rc = run_phase(p.data.data(), p.rows, p.cols, options, &rows_report);
    if (rc != 0)
        return rc;
    transpose(p.data.data(), p.rows, p.cols, p.scratch.data());
    rc = run_phase(p.scratch.data(), p.cols, p.rows, options, &cols_report);
    if (rc != 0)
        return rc;
    transpose(p.scratch.data(), p.cols, p.rows, p.data.data());
    const double makespan_s = (starpu_timing_now() - t0) * 1e-6;
    if (out) {
        *out = rows_report;
        accumulate(*out, cols_report);
        out->makespan_s = makespan_s;
    }
    return 0;
}

int run_row_phase(Problem &p, const Options &options, struct hetpu_divisible_report *out)
{
    return run_phase(p.data.data(), p.rows, p.cols, options, out);
}

}  // namespace hetpu::fft2d
