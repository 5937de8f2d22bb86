// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/fft2d/fft2d_codelets.h"

#include <cerrno>
#include <cstdio>
#include <fftw3.h>
#include <hetpu/gpu_needs.h>

#include <algorithm>
#include <climits>
#include <map>

#include "apps/common/block_codelet.h"
#include "apps/fft2d/fft2d_kernels.h"
#include "config.h"

namespace {

// Made by codelets_init() on the main thread, only read by the workers afterwards.
std::map<uint64_t, fftw_plan> row_plans;

struct starpu_perfmodel model;
struct starpu_codelet cl;
bool initialised = false;

// What one block of rows asks of a GPU, for hetpu's mgb policies
// (include/hetpu/gpu_needs.h). clFFT and cuFFT choose their kernels when planning, so these
// are estimates, taken on the large side:
// - Launch: one block per row (both libraries may pack several short rows into one block,
//   with proportionally more threads: the same warps), about length / 4 threads (radix-4
//   passes), 32 to 256, and the row in shared (local) memory, 16 bytes per complex double.
//   Longer rows are transformed in several passes (clFFT's large-1D plans; cuFFT too), each
//   on pieces that fit a block's shared memory: capped at 2048 elements (32 KiB), a budget
//   every current GPU grants a block. Not checked against each library's kernels.
// - Scratch: clFFT's intermediate buffer (plans split into passes) and cuFFT's work area
//   are taken to hold at most one copy of the batch, so one copy of the block is counted.
//   The exact sizes (clfftGetTmpBufSize, cufftGetSize) exist only for a plan already made
//   on a device, which the scheduler cannot wait for. The OpenCL codelet's staging copy for blocks at a non-zero offset is not counted:
//   fft2d_job.cpp registers every block as a handle of its own (offset 0).
void rows_gpu_needs(struct starpu_task *task, struct hetpu_gpu_needs *needs)
{
    const uint64_t length = *static_cast<const uint64_t *>(task->cl_arg);
    const uint64_t elements = starpu_vector_get_nx(STARPU_TASK_GET_HANDLE(task, 0));
    needs->scratch_bytes = elements * 2 * sizeof(double);
    needs->blocks = static_cast<unsigned>(std::min<uint64_t>(elements / length, UINT_MAX));
    needs->threads_per_block = static_cast<unsigned>(std::clamp<uint64_t>(length / 4, 32, 256));
    needs->shared_mem_per_block = static_cast<unsigned>(std::min<uint64_t>(length, 2048) * 2 * sizeof(double));
}

}  // namespace

extern "C" void hetpu_fft2d_cpu_rows(void *buffers[], void *arg)
{
    const uint64_t length = *static_cast<const uint64_t *>(arg);
    auto *z = reinterpret_cast<fftw_complex *>(STARPU_VECTOR_GET_PTR(buffers[0]));
    const uint64_t rows = STARPU_VECTOR_GET_NX(buffers[0]) / length;
    const fftw_plan plan = row_plans.at(length);
    // The new-array execute is FFTW's thread-safe entry point; the plan was made in place
    // and unaligned, so any row of the block can be passed as both input and output.
    for (uint64_t r = 0; r < rows; ++r)
        fftw_execute_dft(plan, z + r * length, z + r * length);
}

namespace hetpu::fft2d {

int codelets_init(const std::vector<uint64_t> &lengths)
{
    for (uint64_t len : lengths) {
        if (row_plans.count(len))
            continue;
        fftw_complex *scratch = fftw_alloc_complex(len);
        fftw_plan plan =
            fftw_plan_dft_1d(static_cast<int>(len), scratch, scratch, FFTW_FORWARD, FFTW_ESTIMATE | FFTW_UNALIGNED);
        fftw_free(scratch);
        if (!plan) {
            std::fprintf(stderr, "fft2d: FFTW could not plan a transform of length %llu\n",
                         static_cast<unsigned long long>(len));
            return -EINVAL;
        }
        row_plans[len] = plan;
    }
#ifdef HETPU_HAVE_CUDA
    // cuFFT plans on every CUDA worker now, before any block is timed: the first plan of a
    // process loads cuFFT's kernels (0.29 s on one H200 node, for an 8-row block), and a
    // planner would read that as the GPU's speed.
    std::vector<uint64_t> prepare(lengths);
    prepare.push_back(0);
    starpu_execute_on_each_worker(hetpu_fft2d_cuda_prepare, prepare.data(), STARPU_CUDA);
#endif
    if (initialised)
        return 0;
    hetpu::apps::BlockCodelet b;
    b.name = "hetpu_fft2d_rows";
    b.cpu = hetpu_fft2d_cpu_rows;
    b.cpu_name = "hetpu_fft2d_cpu_rows";
#ifdef HETPU_HAVE_CLFFT
    if (int rc = hetpu_fft2d_opencl_setup(); rc != 0)
        return rc;
    b.opencl = hetpu_fft2d_opencl_rows;
#endif
#ifdef HETPU_HAVE_CUDA
    b.cuda = hetpu_fft2d_cuda_rows;
#endif
    b.modes = {STARPU_RW};  // whole rows, transformed in place
    b.gpu_needs = rows_gpu_needs;
    hetpu::apps::fill_block_codelet(cl, model, b);
    initialised = true;
    return 0;
}

void codelets_shutdown()
{
#ifdef HETPU_HAVE_CLFFT
    hetpu_fft2d_opencl_teardown();
#endif
#ifdef HETPU_HAVE_CUDA
    hetpu_fft2d_cuda_teardown();
#endif
    for (auto &kv : row_plans)
        fftw_destroy_plan(kv.second);
    row_plans.clear();
}

struct starpu_codelet *codelet() { return &cl; }

}  // namespace hetpu::fft2d
