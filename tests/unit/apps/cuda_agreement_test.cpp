// SPDX-License-Identifier: LGPL-2.1-or-later
// The CUDA kernels of grn and kmeans against the CPU codelets' cores, bit for bit, and
// fft2d's cuFFT rows against FFTW to rounding. Built
// whenever nvcc exists (the kernels' launch functions need no StarPU with CUDA); the
// program exits 77 (skipped) when no CUDA device is present.
#include <cuda_runtime.h>
#include <fftw3.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <vector>

#include "apps/fft2d/fft2d_kernels.h"
#include "apps/grn/grn_data.h"
#include "apps/grn/grn_kernels.h"
#include "apps/grn/grn_search.h"
#include "apps/kmeans/kmeans_data.h"
#include "apps/kmeans/kmeans_kernels.h"
#include "apps/kmeans/kmeans_lloyd.h"

namespace {

bool have_device()
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

template <typename T> T *to_device(const std::vector<T> &v)
{
    T *p = nullptr;
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void **>(&p), v.size() * sizeof(T) + 1), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    return p;
}

template <typename T> std::vector<T> to_host(const T *p, size_t n)
{
    std::vector<T> v(n);
    EXPECT_EQ(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
}

}  // namespace

TEST(CudaAgreement, GrnBlockScoresEqualCpu)
{
    if (!have_device())
        GTEST_SKIP() << "no CUDA device";
    using namespace hetpu::grn;
    for (uint32_t k = 1; k <= 3; ++k) {
        PlantedNetwork net = generate_network(20, 50, k, 0.1, 31 + k);
        const Expression &e = net.expression;
        SearchInput in = make_search_input(discretise(e, 0.43), 20, e.samples, 1, k, 1.0);
        const uint64_t total = subset_count(20, k);
        BlockArgs a{in.genes, in.samples, in.lag, in.k, kLanes, in.alpha, total / 5, total - total / 5 - 1};
        std::vector<double> cpu(block_output_size(in.genes, kLanes));
        score_block_cpu(a, in.levels.data(), in.xlogx.data(), in.hy.data(), cpu.data(), 2);
        uint8_t *levels = to_device(in.levels);
        double *xlogx = to_device(in.xlogx), *hy = to_device(in.hy);
        double *out = to_device(std::vector<double>(cpu.size(), 7.0));
        ASSERT_EQ(hetpu_grn_cuda_launch(nullptr, levels, xlogx, hy, out, a.genes, a.samples, a.lag, a.k, a.lanes,
                                        a.alpha, a.offset, a.count),
                  0);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const std::vector<double> gpu = to_host(out, cpu.size());
        EXPECT_EQ(std::memcmp(gpu.data(), cpu.data(), cpu.size() * sizeof(double)), 0) << "k = " << k;
        cudaFree(levels);
        cudaFree(xlogx);
        cudaFree(hy);
        cudaFree(out);
    }
}

TEST(CudaAgreement, KmeansPartialsEqualCpu)
{
    if (!have_device())
        GTEST_SKIP() << "no CUDA device";
    using namespace hetpu::kmeans;
    // 4099 points: five chunks of the fixed sum order; 4198401: chunks of 1026 points, 4092
    // of them (kmeans_kernels.h).
    struct Case {
        uint64_t n;
        uint32_t d, k;
    };
    for (const Case &t : {Case{4099, 5, 7}, Case{4198401, 2, 3}}) {
        Blobs b = generate_blobs(t.n, t.d, t.k, 3.0, 13);
        IterationState s = initial_state(b.points, t.k, 2);
        const uint64_t n = b.points.n;
        std::vector<int32_t> labels(n);
        std::vector<double> partial(partial_size(t.k, t.d));
        assign_block(b.points.x.data(), n, s.centroids.data(), t.k, t.d, labels.data(), partial.data(), 2);
        double *x = to_device(b.points.x), *c = to_device(s.centroids);
        double *p = to_device(std::vector<double>(partial.size(), 7.0));
        int32_t *l = to_device(std::vector<int32_t>(n, -1));
        ASSERT_EQ(hetpu_kmeans_cuda_launch(nullptr, x, n, c, t.k, t.d, p, l), 0);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        EXPECT_EQ(to_host(l, n), labels) << n;
        const std::vector<double> gpu = to_host(p, partial.size());
        EXPECT_EQ(std::memcmp(gpu.data(), partial.data(), partial.size() * sizeof(double)), 0) << n;
        cudaFree(x);
        cudaFree(c);
        cudaFree(p);
        cudaFree(l);
    }
}

TEST(CudaAgreement, Fft2dRowsInBatchesEqualFftwToRounding)
{
    if (!have_device())
        GTEST_SKIP() << "no CUDA device";
    // 300 rows of 64: batches of 256, 32, 8 and 4 rows (fft2d_batches.h), after the plans
    // were prepared; 5 rows of 1024 planned on demand.
    ASSERT_EQ(hetpu_fft2d_cufft_prepare(64), 0);
    for (auto [rows, length] : {std::pair<uint64_t, uint64_t>{300, 64}, {5, 1024}}) {
        std::vector<std::complex<double>> z(rows * length);
        for (size_t i = 0; i < z.size(); ++i)
            z[i] = {std::sin(0.37 * static_cast<double>(i)), std::cos(0.11 * static_cast<double>(i * i % 977))};
        std::vector<std::complex<double>> want = z;
        auto *w = reinterpret_cast<fftw_complex *>(want.data());
        fftw_plan plan = fftw_plan_dft_1d(static_cast<int>(length), w, w, FFTW_FORWARD, FFTW_ESTIMATE | FFTW_UNALIGNED);
        for (uint64_t r = 0; r < rows; ++r)
            fftw_execute_dft(plan, w + r * length, w + r * length);
        fftw_destroy_plan(plan);
        std::complex<double> *d = to_device(z);
        ASSERT_EQ(hetpu_fft2d_cufft_rows(d, static_cast<int64_t>(length), static_cast<int64_t>(rows), nullptr), 0);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const std::vector<std::complex<double>> got = to_host(d, z.size());
        double err = 0, scale = 0;
        for (size_t i = 0; i < z.size(); ++i) {
            err = std::max(err, std::abs(got[i] - want[i]));
            scale = std::max(scale, std::abs(want[i]));
        }
        EXPECT_LT(err, 1e-12 * scale) << rows << " rows of " << length;
        cudaFree(d);
    }
    hetpu_fft2d_cuda_teardown();
}

int main(int argc, char **argv)
{
    if (!have_device()) {
        std::fprintf(stderr, "no CUDA device: skipping the CUDA agreement tests\n");
        return 77;
    }
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
