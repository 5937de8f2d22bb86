// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/kmeans/kmeans_codelets.h"

#include <hetpu/gpu_needs.h>

#include <algorithm>
#include <climits>

#include "apps/common/block_codelet.h"
#include "apps/kmeans/kmeans_kernels.h"
#include "apps/kmeans/kmeans_lloyd.h"
#include "config.h"

extern "C" void hetpu_kmeans_cpu_assign(void *buffers[], void *arg)
{
    const auto *a = static_cast<const hetpu_kmeans_args *>(arg);
    const double *x = reinterpret_cast<const double *>(STARPU_VECTOR_GET_PTR(buffers[0]));
    const double *c = reinterpret_cast<const double *>(STARPU_VECTOR_GET_PTR(buffers[1]));
    double *partial = reinterpret_cast<double *>(STARPU_VECTOR_GET_PTR(buffers[2]));
    int32_t *labels = reinterpret_cast<int32_t *>(STARPU_VECTOR_GET_PTR(buffers[3]));
    const uint64_t count = STARPU_VECTOR_GET_NX(buffers[3]);
    // A parallel (fork-join) task: as many OpenMP threads as cores StarPU gave this task
    // (1 under policies that do not combine workers).
    hetpu::kmeans::assign_block(x, count, c, a->k, a->d, labels, partial, starpu_combined_worker_get_size());
}

namespace {

struct starpu_perfmodel model;
struct starpu_codelet codelet;
bool initialised = false;

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
    needs->blocks = static_cast<unsigned>(std::min<uint64_t>((items + 127) / 128, UINT_MAX));
    needs->threads_per_block = 128;
}

}  // namespace

namespace hetpu::kmeans {

int codelets_init()
{
    if (initialised)
        return 0;
    apps::BlockCodelet b;
    b.name = "hetpu_kmeans_assign";
    b.cpu = hetpu_kmeans_cpu_assign;
    b.cpu_name = "hetpu_kmeans_cpu_assign";
    b.forkjoin = true;
#ifdef HETPU_HAVE_OPENCL
    if (int rc = hetpu_kmeans_opencl_init(); rc != 0)
        return rc;
    b.opencl = hetpu_kmeans_opencl_assign;
#endif
#ifdef HETPU_HAVE_CUDA
    b.cuda = hetpu_kmeans_cuda_assign;
#endif
    b.modes = {STARPU_R, STARPU_R, STARPU_W, STARPU_W};  // points, centroids; partial sums, labels
    b.gpu_needs = assign_gpu_needs;
    apps::fill_block_codelet(codelet, model, b);
    initialised = true;
    return 0;
}

void codelets_shutdown()
{
#ifdef HETPU_HAVE_OPENCL
    if (initialised)
        hetpu_kmeans_opencl_shutdown();
#endif
    initialised = false;
}

struct starpu_codelet *assign_codelet() { return &codelet; }

}  // namespace hetpu::kmeans
