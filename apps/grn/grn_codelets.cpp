// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/grn/grn_codelets.h"

#include <hetpu/gpu_needs.h>

#include <algorithm>
#include <climits>

#include "apps/common/block_codelet.h"
#include "apps/grn/grn_kernels.h"
#include "apps/grn/grn_search.h"
#include "config.h"

extern "C" void hetpu_grn_cpu_block(void *buffers[], void *arg)
{
    const auto *a = static_cast<const hetpu::grn::BlockArgs *>(arg);
    const uint8_t *levels = reinterpret_cast<const uint8_t *>(STARPU_VECTOR_GET_PTR(buffers[0]));
    const double *xlogx = reinterpret_cast<const double *>(STARPU_VECTOR_GET_PTR(buffers[1]));
    const double *hy = reinterpret_cast<const double *>(STARPU_VECTOR_GET_PTR(buffers[2]));
    double *out = reinterpret_cast<double *>(STARPU_VECTOR_GET_PTR(buffers[3]));
    // A parallel (fork-join) task: as many OpenMP threads as cores StarPU gave it.
    hetpu::grn::score_block_cpu(*a, levels, xlogx, hy, out, starpu_combined_worker_get_size());
}

namespace {

hetpu::apps::AppBlockCodelet codelet;

// Every block's buffers have the same sizes, so StarPU's default footprint would lump
// all block sizes together: key the history on the number of subsets instead.
uint32_t block_footprint(struct starpu_task *task)
{
    const auto *a = static_cast<const hetpu::grn::BlockArgs *>(task->cl_arg);
    return starpu_hash_crc32c_be_n(&a->count, sizeof a->count, 0);
}

// What one block asks of a GPU, for hetpu's mgb policies (include/hetpu/gpu_needs.h): one
// work-item per (target, lane), no shared memory and nothing allocated beyond the buffers.
// The CUDA launch (blocks of 128 threads) is declared even where the OpenCL one (work-groups
// of 32) runs: 4 * ceil(n / 128) >= ceil(n / 32) warps, in larger blocks, so it is never
// the smaller footprint, and one declaration serves a node with both device kinds. Each
// thread's private counts (GRN_MAX_CONFIGS * 3 ints) live in registers or CUDA local
// memory, which the driver reserves once per context, not per launch: not task scratch.
void block_gpu_needs(struct starpu_task *task, struct hetpu_gpu_needs *needs)
{
    const auto *a = static_cast<const hetpu::grn::BlockArgs *>(task->cl_arg);
    const uint64_t items = static_cast<uint64_t>(a->genes) * a->lanes;
    hetpu::apps::one_thread_per_item(items, needs);
}

}  // namespace

namespace hetpu::grn {

int codelets_init()
{
    apps::BlockCodelet b;
    b.name = "hetpu_grn_block";
    b.cpu = hetpu_grn_cpu_block;
    b.cpu_name = "hetpu_grn_cpu_block";
    b.forkjoin = true;
#ifdef HETPU_HAVE_OPENCL
    b.opencl = hetpu_grn_opencl_block;
    b.opencl_init = hetpu_grn_opencl_init;
    b.opencl_shutdown = hetpu_grn_opencl_shutdown;
#endif
#ifdef HETPU_HAVE_CUDA
    b.cuda = hetpu_grn_cuda_block;
#endif
    b.modes = {STARPU_R, STARPU_R, STARPU_R, STARPU_W};  // levels, xlogx, hy; the scores
    b.footprint = block_footprint;
    b.gpu_needs = block_gpu_needs;
    return codelet.init(b);
}

void codelets_shutdown() { codelet.shutdown(); }

struct starpu_codelet *block_codelet() { return codelet.codelet(); }

}  // namespace hetpu::grn
