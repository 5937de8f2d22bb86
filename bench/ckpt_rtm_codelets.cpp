// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bench/ckpt_rtm_codelets.h"

#include "bench/ckpt_bench_node.h"
#include "bench/ckpt_rtm_kernels.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#ifdef HETPU_HAVE_OPENCL
#include "apps/common/opencl_kernels.h"
#endif

#ifdef HETPU_BENCH_CKPT_CUDA
// bench/ckpt_rtm_cuda.cu
extern "C" void hetpu_bench_rtm_cuda_step(void *buffers[], void *arg);
extern "C" void hetpu_bench_rtm_cuda_image(void *buffers[], void *arg);
#endif

// Called at the end of every step implementation (the CUDA one too): what
// rtm_last_step_finished_ns returns.
extern "C" void hetpu_bench_rtm_step_finished();

static std::atomic<int64_t> step_finished_ns{0};

extern "C" void hetpu_bench_rtm_step_finished()
{
    const int64_t t =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    int64_t prev = step_finished_ns.load();
    while (prev < t && !step_finished_ns.compare_exchange_weak(prev, t)) {
    }
}

namespace hetpu::bench {

namespace {

// The tasks' argument (both codelets); the CUDA file reads the same layout.
struct RtmArgs {
    uint64_t base;
    uint32_t step;
};

uint32_t bits_of(float v)
{
    uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

void step_cpu(void *buffers[], void *arg)
{
    const auto *a = static_cast<const RtmArgs *>(arg);
    rtm_step_host(reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[0])), STARPU_VECTOR_GET_NX(buffers[0]),
                  a->base, a->step);
    hetpu_bench_rtm_step_finished();
}

void image_cpu(void *buffers[], void *arg)
{
    const auto *a = static_cast<const RtmArgs *>(arg);
    const float *y = reinterpret_cast<const float *>(STARPU_VECTOR_GET_PTR(buffers[0]));
    float *image = reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(buffers[1]));
    const std::size_t n = STARPU_VECTOR_GET_NX(buffers[0]);
    for (std::size_t i = 0; i < n; ++i)
        image[i] += y[i];
    *reinterpret_cast<uint64_t *>(STARPU_VECTOR_GET_PTR(buffers[2])) = rtm_digest_host(y, n, a->base);
}

#ifdef HETPU_HAVE_OPENCL
// The formulas of ckpt_rtm_kernels.h. The digest is one work-group: each work-item sums a
// strided share of the terms, then a tree in local memory adds the shares (sums modulo
// 2^64: the order does not change the result).
const char *kSource = R"CLC(
__kernel void rtm_step(__global float *y, ulong off, ulong n, ulong base, uint step)
{
    const ulong i = get_global_id(0);
    if (i >= n)
        return;
    const uint v = (uint)y[off + i];
    y[off + i] = (float)((v * 5u + step * 3u + (uint)((base + i) % 13u)) % 65521u);
}

__kernel void rtm_image(__global const float *y, ulong y_off, __global float *image, ulong i_off,
                        __global ulong *digest, ulong d_off, ulong n, ulong base, __local ulong *part)
{
    const size_t l = get_local_id(0), group = get_local_size(0);
    ulong s = 0;
    for (ulong i = l; i < n; i += group) {
        const float v = y[y_off + i];
        image[i_off + i] += v;
        const ulong h = (((ulong)as_uint(v) << 32) | ((base + i) & 0xffffffffUL)) * 0x9E3779B97F4A7C15UL;
        s += h ^ (h >> 31);
    }
    part[l] = s;
    for (size_t w = group / 2; w > 0; w /= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < w)
            part[l] += part[l + w];
    }
    if (l == 0)
        digest[d_off] = part[0];
}
)CLC";

apps::OpenclKernels kernels;

// Runs `kernel` over `global` work-items in groups of `local` (0: the runtime's choice) and
// waits for it: the task is done when its data is.
void run_kernel(cl_kernel kernel, cl_command_queue queue, size_t global, size_t local)
{
    cl_event event;
    apps::OpenclKernels::check(
        clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, local ? &local : nullptr, 0, nullptr, &event));
    apps::OpenclKernels::check(clWaitForEvents(1, &event));
    clReleaseEvent(event);
    starpu_opencl_release_kernel(kernel);
}

cl_ulong element_offset(void *buffer, size_t element)
{
    return static_cast<cl_ulong>(STARPU_VECTOR_GET_OFFSET(buffer) / element);
}

void step_opencl(void *buffers[], void *arg)
{
    const auto *a = static_cast<const RtmArgs *>(arg);
    cl_command_queue queue;
    cl_kernel k = kernels.kernel("rtm_step", queue);
    const cl_mem y = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[0]));
    const cl_ulong n = STARPU_VECTOR_GET_NX(buffers[0]), base = a->base;
    const cl_uint step = a->step;
    apps::set_kernel_args(k, y, element_offset(buffers[0], sizeof(float)), n, base, step);
    run_kernel(k, queue, static_cast<size_t>(n), 0);
    hetpu_bench_rtm_step_finished();
}

void image_opencl(void *buffers[], void *arg)
{
    const auto *a = static_cast<const RtmArgs *>(arg);
    cl_command_queue queue;
    cl_kernel k = kernels.kernel("rtm_image", queue);
    const cl_mem y = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[0]));
    const cl_mem image = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[1]));
    const cl_mem digest = reinterpret_cast<cl_mem>(STARPU_VECTOR_GET_DEV_HANDLE(buffers[2]));
    const cl_ulong n = STARPU_VECTOR_GET_NX(buffers[0]), base = a->base;
    apps::set_kernel_args(k, y, element_offset(buffers[0], sizeof(float)), image,
                          element_offset(buffers[1], sizeof(float)), digest,
                          element_offset(buffers[2], sizeof(uint64_t)), n, base);
    apps::OpenclKernels::check(clSetKernelArg(k, 8, HETPU_RTM_DIGEST_GROUP * sizeof(cl_ulong), nullptr));
    run_kernel(k, queue, HETPU_RTM_DIGEST_GROUP, HETPU_RTM_DIGEST_GROUP);
}
#endif

struct starpu_codelet make_codelet(bool image)
{
    struct starpu_codelet cl;
    starpu_codelet_init(&cl);
    cl.where = STARPU_CPU;
    cl.cpu_funcs[0] = image ? image_cpu : step_cpu;
#ifdef HETPU_HAVE_OPENCL
    cl.where |= STARPU_OPENCL;
    cl.opencl_funcs[0] = image ? image_opencl : step_opencl;
#endif
#ifdef HETPU_BENCH_CKPT_CUDA
    cl.where |= STARPU_CUDA;
    cl.cuda_funcs[0] = image ? hetpu_bench_rtm_cuda_image : hetpu_bench_rtm_cuda_step;
#endif
    if (image) {
        cl.nbuffers = 3;
        cl.modes[0] = STARPU_R;
        cl.modes[1] = STARPU_RW;
        cl.modes[2] = STARPU_W;
        cl.name = "hetpu_bench_rtm_image";
    } else {
        cl.nbuffers = 1;
        cl.modes[0] = STARPU_RW;
        cl.name = "hetpu_bench_rtm_step";
    }
    return cl;
}

struct starpu_codelet step_codelet = make_codelet(false);
struct starpu_codelet image_codelet = make_codelet(true);

int submit(struct starpu_codelet *cl, const starpu_data_handle_t *handles, int worker, uint64_t base, uint32_t step)
{
    struct starpu_task *t = starpu_task_create();
    t->cl = cl;
    for (int i = 0; i < cl->nbuffers; ++i)
        t->handles[i] = handles[i];
    auto *a = static_cast<RtmArgs *>(std::malloc(sizeof(RtmArgs)));
    a->base = base;
    a->step = step;
    t->cl_arg = a;
    t->cl_arg_size = sizeof *a;
    t->cl_arg_free = 1;
    t->execute_on_a_specific_worker = 1;
    t->workerid = static_cast<unsigned>(worker);
    return starpu_task_submit(t);
}

}  // namespace

int rtm_codelets_load()
{
#ifdef HETPU_HAVE_OPENCL
    return kernels.load(kSource);
#else
    return 0;
#endif
}

void rtm_codelets_unload()
{
#ifdef HETPU_HAVE_OPENCL
    kernels.unload();
#endif
}

int rtm_submit_step(starpu_data_handle_t block, int worker, uint64_t base, uint32_t step)
{
    return submit(&step_codelet, &block, worker, base, step);
}

int64_t rtm_last_step_finished_ns() { return step_finished_ns.load(); }

int rtm_submit_image(starpu_data_handle_t block, starpu_data_handle_t image, starpu_data_handle_t digest, int worker,
                     uint64_t base)
{
    const starpu_data_handle_t handles[] = {block, image, digest};
    return submit(&image_codelet, handles, worker, base, 0);
}

void rtm_step_host(float *y, std::size_t n, uint64_t base, uint32_t step)
{
    for (std::size_t i = 0; i < n; ++i)
        y[i] = static_cast<float>(hetpu_rtm_step_value(static_cast<uint32_t>(y[i]), base + i, step));
}

uint64_t rtm_digest_host(const float *y, std::size_t n, uint64_t base)
{
    uint64_t s = 0;
    for (std::size_t i = 0; i < n; ++i)
        s += hetpu_rtm_digest_term(bits_of(y[i]), base + i);
    return s;
}

}  // namespace hetpu::bench
