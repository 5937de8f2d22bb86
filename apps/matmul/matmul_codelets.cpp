#include "apps/matmul/matmul_codelets.h"

#include <cblas.h>

#include "apps/matmul/matmul_kernels.h"
#include "apps/matmul/gemm_shape.h"
#include "config.h"

namespace {

// OpenBLAS: cblas_sgemm/dgemm with column-major STARPU_MATRIX buffers.
template <typename T>
void cpu_gemm(void *buffers[])
{
    const T *a = reinterpret_cast<const T *>(STARPU_MATRIX_GET_PTR(buffers[0]));
    const T *b = reinterpret_cast<const T *>(STARPU_MATRIX_GET_PTR(buffers[1]));
    T *c = reinterpret_cast<T *>(STARPU_MATRIX_GET_PTR(buffers[2]));
    const hetpu::matmul::GemmShape g = hetpu::matmul::gemm_shape(buffers);
    if constexpr (sizeof(T) == sizeof(float))
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, g.m, g.n, g.k, 1.0f, a, g.lda, b, g.ldb, 0.0f, c, g.ldc);
    else
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, g.m, g.n, g.k, 1.0, a, g.lda, b, g.ldb, 0.0, c, g.ldc);
}

struct starpu_perfmodel model_s, model_d;
struct starpu_codelet codelet_s, codelet_d;
bool initialised = false;

void fill(struct starpu_codelet &cl, struct starpu_perfmodel &model, const char *symbol,
          starpu_cpu_func_t cpu, const char *cpu_name, starpu_opencl_func_t opencl,
          starpu_cuda_func_t cuda)
{
    // History-based: indexed by the footprint of the buffers' sizes, so each distinct
    // block width is calibrated separately (fixed blocks need one calibration).
    model.type = STARPU_HISTORY_BASED;
    model.symbol = symbol;

    starpu_codelet_init(&cl);
    cl.name = symbol;
    cl.cpu_funcs[0] = cpu;
    cl.cpu_funcs_name[0] = cpu_name;
    cl.opencl_funcs[0] = opencl;
    cl.cuda_funcs[0] = cuda;
    if (cuda)
        cl.cuda_flags[0] = STARPU_CUDA_ASYNC;  // StarPU syncs the worker's stream after
    cl.nbuffers = 3;
    cl.modes[0] = STARPU_R;
    cl.modes[1] = STARPU_R;
    cl.modes[2] = STARPU_W;
    cl.max_parallelism = 1;
    cl.model = &model;
}

}  // namespace

extern "C" void hetpu_matmul_cpu_sgemm(void *buffers[], void *) { cpu_gemm<float>(buffers); }
extern "C" void hetpu_matmul_cpu_dgemm(void *buffers[], void *) { cpu_gemm<double>(buffers); }

namespace hetpu::matmul {

void codelets_init()
{
    openblas_set_num_threads(1);
#ifdef HETPU_HAVE_CUDA
    starpu_cublas_init();
#endif
    if (initialised)
        return;
    starpu_opencl_func_t ocl_s = nullptr, ocl_d = nullptr;
    starpu_cuda_func_t cuda_s = nullptr, cuda_d = nullptr;
#ifdef HETPU_HAVE_OPENCL
    ocl_s = hetpu_matmul_opencl_sgemm;
    ocl_d = hetpu_matmul_opencl_dgemm;
#endif
#ifdef HETPU_HAVE_CUDA
    cuda_s = hetpu_matmul_cuda_sgemm;
    cuda_d = hetpu_matmul_cuda_dgemm;
#endif
    fill(codelet_s, model_s, "hetpu_matmul_sgemm", hetpu_matmul_cpu_sgemm, "hetpu_matmul_cpu_sgemm", ocl_s, cuda_s);
    fill(codelet_d, model_d, "hetpu_matmul_dgemm", hetpu_matmul_cpu_dgemm, "hetpu_matmul_cpu_dgemm", ocl_d, cuda_d);
    initialised = true;
}

void codelets_shutdown()
{
#ifdef HETPU_HAVE_CUDA
    starpu_cublas_shutdown();
#endif
}

struct starpu_codelet *codelet(Precision precision)
{
    return precision == Precision::Single ? &codelet_s : &codelet_d;
}

}  // namespace hetpu::matmul
