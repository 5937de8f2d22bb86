// SPDX-License-Identifier: LGPL-2.1-or-later
// OpenCL implementation of the matmul codelets: CLBlast's GEMM on the buffers StarPU has
// placed on the worker's device. Built only when configure found CLBlast
// (HETPU_HAVE_OPENCL). StarPU 1.3 runs OpenCL codelets synchronously (no
// STARPU_OPENCL_ASYNC flag here), so the kernel must have finished when we return.
#include "config.h"

#ifdef HETPU_HAVE_OPENCL

// starpu.h first: it sets CL_TARGET_OPENCL_VERSION before the OpenCL headers are read.
#include <starpu.h>
#include <clblast_c.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <utility>

#include "apps/matmul/gemm_shape.h"
#include "apps/matmul/matmul_kernels.h"

namespace {

// CLBlast is not safe when two threads enter a routine at once: building a routine copies its
// tuning database and fills its kernel cache, and two OpenCL workers doing that together
// corrupted the heap (a crash inside clblast::Database's constructor, about one run in
// thirty on a two-device PoCL node; upstream CLBlast reports the same, #486 on its tracker). Only the
// enqueue is serialised: each worker waits for its own queue outside the lock, so the
// devices still compute at the same time.
std::mutex clblast_enqueue_mutex;

// CLBlast computes GEMM with one generic "direct" kernel when m x n x k < s^3, and otherwise
// with its "indirect" kernel plus kernels that pad and transpose the operands; s is
// XGEMM_MIN_INDIRECT_SIZE from its tuning database, a guess for square problems. A block
// here is tall and thin (m = k = the matrix size, n = the block's columns): measured on
// PoCL's CPU device (n = 3072, one thread), blocks under ~160 columns got the direct kernel
// at ~240 columns/s, wider ones the indirect kernel at ~520 columns/s, so a scheduler giving
// the device narrow blocks paid twice the time per column. Set per device and precision
// before the first GEMM there (hetpu_matmul_opencl_set_min_indirect; 0: CLBlast's own).
std::atomic<unsigned long long> min_indirect{128};
std::set<std::pair<cl_device_id, int>> min_indirect_applied;  // guarded by clblast_enqueue_mutex

void apply_min_indirect(cl_command_queue queue, CLBlastPrecision precision)
{
    const unsigned long long size = min_indirect.load();
    cl_device_id device = nullptr;
    if (size == 0 || clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr) != CL_SUCCESS)
        return;
    if (!min_indirect_applied.insert({device, static_cast<int>(precision)}).second)
        return;
    const char *names[] = {"XGEMM_MIN_INDIRECT_SIZE"};
    const size_t values[] = {static_cast<size_t>(size)};
    const CLBlastStatusCode status = CLBlastOverrideParameters(device, "GemmRoutine", precision, 1, names, values);
    // Not fatal: GEMM is as correct with CLBlast's own choice, only slower on narrow blocks.
    if (status != CLBlastSuccess)
        std::fprintf(stderr,
                     "matmul: CLBlast did not take XGEMM_MIN_INDIRECT_SIZE = %llu (status %d); "
                     "it keeps its own choice of GEMM kernel\n",
                     size, static_cast<int>(status));
}

template <typename T> void opencl_gemm(void *buffers[])
{
    // STARPU_MATRIX_GET_OFFSET is in bytes; CLBlast takes offsets in elements.
    cl_mem a = reinterpret_cast<cl_mem>(STARPU_MATRIX_GET_DEV_HANDLE(buffers[0]));
    cl_mem b = reinterpret_cast<cl_mem>(STARPU_MATRIX_GET_DEV_HANDLE(buffers[1]));
    cl_mem c = reinterpret_cast<cl_mem>(STARPU_MATRIX_GET_DEV_HANDLE(buffers[2]));
    const size_t a_off = STARPU_MATRIX_GET_OFFSET(buffers[0]) / sizeof(T);
    const size_t b_off = STARPU_MATRIX_GET_OFFSET(buffers[1]) / sizeof(T);
    const size_t c_off = STARPU_MATRIX_GET_OFFSET(buffers[2]) / sizeof(T);
    const hetpu::matmul::GemmShape g = hetpu::matmul::gemm_shape(buffers);
    const size_t m = g.m, n = g.n, k = g.k, lda = g.lda, ldb = g.ldb, ldc = g.ldc;

    cl_command_queue queue;
    starpu_opencl_get_current_queue(&queue);
    cl_event event = nullptr;
    CLBlastStatusCode status;
    std::unique_lock<std::mutex> enqueue_lock(clblast_enqueue_mutex);
    apply_min_indirect(queue, sizeof(T) == sizeof(float) ? CLBlastPrecisionSingle : CLBlastPrecisionDouble);
    // beta = 0: CLBlast does not read C, whose device copy is uninitialised (mode W).
    if constexpr (sizeof(T) == sizeof(float))
        status = CLBlastSgemm(CLBlastLayoutColMajor, CLBlastTransposeNo, CLBlastTransposeNo, m, n, k, 1.0f, a, a_off,
                              lda, b, b_off, ldb, 0.0f, c, c_off, ldc, &queue, &event);
    else
        status = CLBlastDgemm(CLBlastLayoutColMajor, CLBlastTransposeNo, CLBlastTransposeNo, m, n, k, 1.0, a, a_off,
                              lda, b, b_off, ldb, 0.0, c, c_off, ldc, &queue, &event);
    enqueue_lock.unlock();
    if (status != CLBlastSuccess) {
        char worker[64];
        starpu_worker_get_name(starpu_worker_get_id(), worker, sizeof worker);
        STARPU_ABORT_MSG("CLBlast%cgemm(m=%zu, n=%zu, k=%zu) failed on %s with status %d "
                         "(see CLBlastStatusCode in clblast_c.h; -2048 and below are CLBlast's own codes)\n",
                         sizeof(T) == sizeof(float) ? 'S' : 'D', m, n, k, worker, static_cast<int>(status));
    }
    cl_int err = clFinish(queue);
    if (event)
        clReleaseEvent(event);
    if (err != CL_SUCCESS)
        STARPU_OPENCL_REPORT_ERROR(err);
}

}  // namespace

extern "C" void hetpu_matmul_opencl_set_min_indirect(unsigned long long size) { min_indirect.store(size); }
extern "C" void hetpu_matmul_opencl_sgemm(void *buffers[], void *) { opencl_gemm<float>(buffers); }
extern "C" void hetpu_matmul_opencl_dgemm(void *buffers[], void *) { opencl_gemm<double>(buffers); }

#endif  // HETPU_HAVE_OPENCL
