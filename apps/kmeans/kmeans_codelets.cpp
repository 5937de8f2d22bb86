#include "apps/kmeans/kmeans_codelets.h"

#include <climits>

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

}  // namespace

namespace hetpu::kmeans {

int codelets_init()
{
    if (initialised)
        return 0;
    model.type = STARPU_HISTORY_BASED;
    model.symbol = "hetpu_kmeans_assign";
    starpu_codelet_init(&codelet);
    codelet.name = "hetpu_kmeans_assign";
    codelet.type = STARPU_FORKJOIN;
    codelet.max_parallelism = INT_MAX;
    codelet.cpu_funcs[0] = hetpu_kmeans_cpu_assign;
    codelet.cpu_funcs_name[0] = "hetpu_kmeans_cpu_assign";
#ifdef HETPU_HAVE_OPENCL
    if (int rc = hetpu_kmeans_opencl_init(); rc != 0)
        return rc;
    codelet.opencl_funcs[0] = hetpu_kmeans_opencl_assign;
#endif
#ifdef HETPU_HAVE_CUDA
    codelet.cuda_funcs[0] = hetpu_kmeans_cuda_assign;
    codelet.cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
    codelet.nbuffers = 4;
    codelet.modes[0] = STARPU_R;
    codelet.modes[1] = STARPU_R;
    codelet.modes[2] = STARPU_W;
    codelet.modes[3] = STARPU_W;
    codelet.model = &model;
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
