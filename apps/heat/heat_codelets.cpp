// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/heat/heat_codelets.h"

#include <cstdlib>
#include <cstring>

#include "apps/heat/heat_grid.h"

extern "C" void hetpu_heat_cpu_sweep(void *buffers[], void *arg)
{
    const auto *a = static_cast<const hetpu_heat_args *>(arg);
    float *block = reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[0]));
    const float *above = reinterpret_cast<const float *>(STARPU_VECTOR_GET_PTR(buffers[1]));
    const float *below = reinterpret_cast<const float *>(STARPU_VECTOR_GET_PTR(buffers[2]));
    float *scratch = reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[3]));
    const hetpu::heat::Geometry g{a->rows, a->cols, 1};
    const hetpu::heat::BlockRows b{a->first, a->count};
    hetpu::heat::step_block(block, above, below, g, b, scratch);
    std::memcpy(block, scratch, b.cells(a->cols) * sizeof(float));
}

extern "C" void hetpu_heat_cpu_edges(void *buffers[], void *)
{
    const float *block = reinterpret_cast<const float *>(STARPU_VECTOR_GET_PTR(buffers[0]));
    const std::size_t cols = STARPU_VECTOR_GET_NX(buffers[1]);
    const std::size_t cells = STARPU_VECTOR_GET_NX(buffers[0]);
    std::memcpy(reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[1])), block, cols * sizeof(float));
    std::memcpy(reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[2])), block + cells - cols,
                cols * sizeof(float));
}

namespace hetpu::heat {

namespace {

struct starpu_codelet sweep_codelet, edges_codelet;
bool initialised = false;

void fill(struct starpu_codelet &cl, const char *name, starpu_cpu_func_t cpu, starpu_opencl_func_t opencl,
          starpu_cuda_func_t cuda)
{
    starpu_codelet_init(&cl);
    cl.name = name;
    cl.cpu_funcs[0] = cpu;
    cl.opencl_funcs[0] = opencl;
    cl.cuda_funcs[0] = cuda;
    // The CUDA functions only queue work on the worker's stream; StarPU waits for it.
    if (cuda)
        cl.cuda_flags[0] = STARPU_CUDA_ASYNC;
}

int submit(struct starpu_codelet *cl, const starpu_data_handle_t *handles, const hetpu_heat_args *args, int worker)
{
    struct starpu_task *t = starpu_task_create();
    t->cl = cl;
    for (int i = 0; i < cl->nbuffers; ++i)
        t->handles[i] = handles[i];
    if (args) {
        auto *copy = static_cast<hetpu_heat_args *>(std::malloc(sizeof *args));
        if (!copy) {
            starpu_task_destroy(t);
            return -ENOMEM;
        }
        *copy = *args;
        t->cl_arg = copy;
        t->cl_arg_size = sizeof *copy;
        t->cl_arg_free = 1;
    }
    t->execute_on_a_specific_worker = 1;
    t->workerid = static_cast<unsigned>(worker);
    return starpu_task_submit(t);
}

}  // namespace

int codelets_init()
{
    if (initialised)
        return 0;
    starpu_opencl_func_t sweep_cl = nullptr, edges_cl = nullptr;
    starpu_cuda_func_t sweep_cu = nullptr, edges_cu = nullptr;
#ifdef HETPU_HAVE_OPENCL
    if (int rc = hetpu_heat_opencl_init(); rc != 0)
        return rc;
    sweep_cl = hetpu_heat_opencl_sweep;
    edges_cl = hetpu_heat_opencl_edges;
#endif
#ifdef HETPU_HAVE_CUDA
    sweep_cu = hetpu_heat_cuda_sweep;
    edges_cu = hetpu_heat_cuda_edges;
#endif
    fill(sweep_codelet, "hetpu_heat_sweep", hetpu_heat_cpu_sweep, sweep_cl, sweep_cu);
    sweep_codelet.nbuffers = 4;
    sweep_codelet.modes[0] = STARPU_RW;
    sweep_codelet.modes[1] = STARPU_R;
    sweep_codelet.modes[2] = STARPU_R;
    sweep_codelet.modes[3] = STARPU_SCRATCH;
    fill(edges_codelet, "hetpu_heat_edges", hetpu_heat_cpu_edges, edges_cl, edges_cu);
    edges_codelet.nbuffers = 3;
    edges_codelet.modes[0] = STARPU_R;
    edges_codelet.modes[1] = STARPU_W;
    edges_codelet.modes[2] = STARPU_W;
    initialised = true;
    return 0;
}

void codelets_shutdown()
{
#ifdef HETPU_HAVE_OPENCL
    if (initialised)
        hetpu_heat_opencl_shutdown();
#endif
    initialised = false;
}

int submit_sweep(starpu_data_handle_t block, starpu_data_handle_t above, starpu_data_handle_t below,
                 starpu_data_handle_t scratch, const hetpu_heat_args &args, int worker)
{
    const starpu_data_handle_t handles[] = {block, above, below, scratch};
    return submit(&sweep_codelet, handles, &args, worker);
}

int submit_edges(starpu_data_handle_t block, starpu_data_handle_t top, starpu_data_handle_t bottom, int worker)
{
    const starpu_data_handle_t handles[] = {block, top, bottom};
    return submit(&edges_codelet, handles, nullptr, worker);
}

}  // namespace hetpu::heat
