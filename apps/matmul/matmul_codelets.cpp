// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/matmul/matmul_codelets.h"

#include <cblas.h>
#include <hetpu/gpu_needs.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "apps/common/block_codelet.h"
#include "apps/matmul/matmul_kernels.h"
#include "apps/matmul/gemm_shape.h"
#include "config.h"

namespace {

// OpenBLAS: cblas_sgemm/dgemm with column-major STARPU_MATRIX buffers.
template <typename T> void cpu_gemm(void *buffers[])
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

// What one GEMM block asks of a GPU, for hetpu's mgb policies (include/hetpu/gpu_needs.h).
// cuBLAS and CLBlast choose their kernels at run time, so these are estimates, each taken
// on the large side:
// - Launch: one block per 64 x 64 tile of C (CLBlast's default MWG = NWG = 64; cuBLAS's
//   kernels use 64- to 256-wide tiles, so 64 gives the larger grid) of 256 threads
//   (cuBLAS's usual block; CLBlast's default 16 x 8 = 128 is smaller), holding a 64 x 32
//   panel of A and one of B in shared (local) memory.
// - Scratch: CLBlast's indirect GEMM copies A, B and C, each padded to multiples of its
//   tile sizes, into a temporary buffer it allocates itself (its direct kernel, for small
//   sizes, needs none). Its tuner's tiles are at most 128 wide, so padding every dimension
//   to 128 bounds that buffer. cuBLAS uses instead its handle's workspace, 4 MiB or 32 MiB
//   on Hopper (cublasSetWorkspace's documentation), allocated outside StarPU's allocator;
//   it counts only when the codelet has a CUDA version. A task runs one library, so its
//   scratch is the larger of the two.
// Both precisions share this function: the element size comes from the handle.
void gemm_gpu_needs(struct starpu_task *task, struct hetpu_gpu_needs *needs)
{
    starpu_data_handle_t a = STARPU_TASK_GET_HANDLE(task, 0), b = STARPU_TASK_GET_HANDLE(task, 1);
    const uint64_t m = starpu_matrix_get_nx(a), k = starpu_matrix_get_ny(a), n = starpu_matrix_get_ny(b);
    const uint64_t elem = starpu_matrix_get_elemsize(a);
    const auto up = [](uint64_t x, uint64_t q) { return (x + q - 1) / q; };
    const uint64_t mp = up(m, 128) * 128, np = up(n, 128) * 128, kp = up(k, 128) * 128;
    uint64_t scratch = (mp * kp + kp * np + mp * np) * elem;
#ifdef HETPU_HAVE_CUDA
    scratch = std::max<uint64_t>(scratch, uint64_t(32) << 20);
#endif
    needs->scratch_bytes = scratch;
    needs->blocks = static_cast<unsigned>(std::min<uint64_t>(up(m, 64) * up(n, 64), UINT_MAX));
    needs->threads_per_block = 256;
    needs->shared_mem_per_block = static_cast<unsigned>(2 * 64 * 32 * elem);
}

struct starpu_perfmodel model_s, model_d;
struct starpu_codelet codelet_s, codelet_d;
bool initialised = false;

void fill(struct starpu_codelet &cl, struct starpu_perfmodel &model, const char *symbol, starpu_cpu_func_t cpu,
          const char *cpu_name, starpu_opencl_func_t opencl, starpu_cuda_func_t cuda)
{
    hetpu::apps::BlockCodelet b;
    b.name = symbol;
    b.cpu = cpu;
    b.cpu_name = cpu_name;
    b.opencl = opencl;
    b.cuda = cuda;
    b.modes = {STARPU_R, STARPU_R, STARPU_W};  // A, the B block; the C block
    b.gpu_needs = gemm_gpu_needs;
    hetpu::apps::fill_block_codelet(cl, model, b);
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

struct starpu_codelet *codelet(Precision precision) { return precision == Precision::Single ? &codelet_s : &codelet_d; }

void set_clblast_min_indirect([[maybe_unused]] uint64_t size)
{
#ifdef HETPU_HAVE_OPENCL
    hetpu_matmul_opencl_set_min_indirect(size);
#endif
}

}  // namespace hetpu::matmul
