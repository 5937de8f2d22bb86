// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/kmeans/kmeans_codelets.h"

#include <hetpu/gpu_needs.h>

#include <algorithm>
#include <climits>

#include "apps/common/block_codelet.h"
#include "apps/kmeans/kmeans_buffers.h"
#include "apps/kmeans/kmeans_kernels.h"
#include "apps/kmeans/kmeans_lloyd.h"
#include "config.h"

extern "C" void hetpu_kmeans_cpu_assign(void *buffers[], void *arg)
{
    const hetpu::kmeans::AssignBuffers b(buffers, arg);
    // A parallel (fork-join) task: as many OpenMP threads as cores StarPU gave this task
    // (1 under policies that do not combine workers).
    hetpu::kmeans::assign_block(b.x, b.count, b.centroids, b.k, b.d, b.labels, b.partial,
                                starpu_combined_worker_get_size());
}

namespace {

hetpu::apps::AppBlockCodelet codelet;

// What one assignment block asks of a GPU, for hetpu's mgb policies
// (include/hetpu/gpu_needs.h). Its larger kernel has one work-item per point (labels), or
// per partial-result entry (k * d + k + 1) should that ever be more. The CUDA launch
// (blocks of 128 threads) is declared even where the OpenCL one (work-groups of 64) runs:
// 4 * ceil(n / 128) >= 2 * ceil(n / 64) warps, in larger blocks, so it is never the smaller
// footprint. No shared memory, nothing allocated beyond the buffers.
void assign_gpu_needs(struct starpu_task *task, struct hetpu_gpu_needs *needs)
{
    const uint64_t points = starpu_vector_get_nx(STARPU_TASK_GET_HANDLE(task, 3));
    const uint64_t partial = starpu_vector_get_nx(STARPU_TASK_GET_HANDLE(task, 2));
    const uint64_t items = std::max(points, partial);
    hetpu::apps::one_thread_per_item(items, needs);
}

}  // namespace

namespace hetpu::kmeans {

int codelets_init()
{
    apps::BlockCodelet b;
    b.name = "hetpu_kmeans_assign";
    b.cpu = hetpu_kmeans_cpu_assign;
    b.cpu_name = "hetpu_kmeans_cpu_assign";
    b.forkjoin = true;
#ifdef HETPU_HAVE_OPENCL
    b.opencl = hetpu_kmeans_opencl_assign;
    b.opencl_init = hetpu_kmeans_opencl_init;
    b.opencl_shutdown = hetpu_kmeans_opencl_shutdown;
#endif
#ifdef HETPU_HAVE_CUDA
    b.cuda = hetpu_kmeans_cuda_assign;
#endif
    b.modes = {STARPU_R, STARPU_R, STARPU_W, STARPU_W};  // points, centroids; partial sums, labels
    b.gpu_needs = assign_gpu_needs;
    return codelet.init(b);
}

void codelets_shutdown() { codelet.shutdown(); }

struct starpu_codelet *assign_codelet() { return codelet.codelet(); }

}  // namespace hetpu::kmeans
