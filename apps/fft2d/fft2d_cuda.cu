// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA implementation of the fft2d row codelet: cuFFT batched Z2Z transforms in place on
// the worker's stream. Always compiled when nvcc is found (so toolkit breakage shows up at
// build time); the StarPU entry points exist only when StarPU itself has CUDA, and the
// codelet registers them only then (HETPU_HAVE_CUDA).
#include <cufft.h>
#include <starpu.h>

#include <map>
#include <mutex>
#include <tuple>

#include "apps/fft2d/fft2d_batches.h"
#include "apps/fft2d/fft2d_kernels.h"

namespace {

// Largest batch of rows one plan transforms (fft2d_batches.h): 256 rows of 4096 complex
// doubles are 16 MiB, enough work for any GPU per launch, and cuFFT's work area stays
// bounded by the batch, not by the block.
constexpr uint64_t kMaxBatch = 256;

// Plans by (device, length, batch): cufftPlanMany allocates and is not free, so each batch
// shape is planned once per device.
std::mutex plans_mutex;
std::map<std::tuple<int, int64_t, int64_t>, cufftHandle> plans;

cufftResult plan_for(int device, int64_t length, int64_t batch, cufftHandle &plan)
{
    std::lock_guard<std::mutex> lock(plans_mutex);
    const auto key = std::make_tuple(device, length, batch);
    auto it = plans.find(key);
    if (it == plans.end()) {
        int n[1] = {static_cast<int>(length)};
        cufftResult r = cufftPlanMany(&plan, 1, n, nullptr, 1, static_cast<int>(length), nullptr, 1,
                                      static_cast<int>(length), CUFFT_Z2Z, static_cast<int>(batch));
        if (r != CUFFT_SUCCESS)
            return r;
        it = plans.emplace(key, plan).first;
    }
    plan = it->second;
    return CUFFT_SUCCESS;
}

}  // namespace

extern "C" int hetpu_fft2d_cufft_rows(void *data, int64_t length, int64_t rows, void *stream)
{
    int device = 0;
    cudaGetDevice(&device);
    auto *z = static_cast<cufftDoubleComplex *>(data);
    for (uint64_t batch : hetpu::fft2d::row_batches(static_cast<uint64_t>(rows), kMaxBatch)) {
        cufftHandle plan;
        cufftResult r = plan_for(device, length, static_cast<int64_t>(batch), plan);
        if (r == CUFFT_SUCCESS)
            r = cufftSetStream(plan, static_cast<cudaStream_t>(stream));
        if (r == CUFFT_SUCCESS)
            r = cufftExecZ2Z(plan, z, z, CUFFT_FORWARD);
        if (r != CUFFT_SUCCESS)
            return static_cast<int>(r);
        z += batch * static_cast<uint64_t>(length);
    }
    return CUFFT_SUCCESS;
}

extern "C" int hetpu_fft2d_cufft_prepare(int64_t length)
{
    int device = 0;
    cudaGetDevice(&device);
    for (uint64_t batch = 1; batch <= kMaxBatch; batch *= 2) {
        cufftHandle plan;
        if (cufftResult r = plan_for(device, length, static_cast<int64_t>(batch), plan); r != CUFFT_SUCCESS)
            return static_cast<int>(r);
    }
    return CUFFT_SUCCESS;
}

extern "C" void hetpu_fft2d_cuda_teardown(void)
{
    std::lock_guard<std::mutex> lock(plans_mutex);
    for (auto &kv : plans)
        cufftDestroy(kv.second);
    plans.clear();
}

#ifdef STARPU_USE_CUDA
extern "C" void hetpu_fft2d_cuda_rows(void *buffers[], void *arg)
{
    const uint64_t length = *static_cast<const uint64_t *>(arg);
    void *data = reinterpret_cast<void *>(STARPU_VECTOR_GET_PTR(buffers[0]));
    const uint64_t rows = STARPU_VECTOR_GET_NX(buffers[0]) / length;
    // The codelet is STARPU_CUDA_ASYNC: queue on the worker's stream, StarPU waits for it.
    const int status = hetpu_fft2d_cufft_rows(data, static_cast<int64_t>(length), static_cast<int64_t>(rows),
                                              starpu_cuda_get_local_stream());
    if (status != CUFFT_SUCCESS)
        STARPU_ABORT_MSG("cuFFT Z2Z of %llu rows of %llu failed with cufftResult %d\n",
                         static_cast<unsigned long long>(rows), static_cast<unsigned long long>(length), status);
}

// Runs on each CUDA worker when the codelets are set up, in its device's context. A plan
// that cannot be made now (memory) is made, or its failure reported, by the block that
// needs it.
extern "C" void hetpu_fft2d_cuda_prepare(void *arg)
{
    for (const uint64_t *len = static_cast<const uint64_t *>(arg); *len != 0; ++len)
        hetpu_fft2d_cufft_prepare(static_cast<int64_t>(*len));
}
#endif  // STARPU_USE_CUDA
