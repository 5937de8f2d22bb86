// SPDX-License-Identifier: LGPL-2.1-or-later
// The GPU needs the four apps declare to hetpu's mgb policies (include/hetpu/gpu_needs.h):
// each codelet's callback, reached the way the scheduler reaches it (hetpu_gpu_needs_of on
// a task of that codelet), gives the expected launch and scratch for a known block. StarPU
// runs with one CPU worker only: the callbacks depend on the data, not on the devices, and
// no OpenCL program needs compiling for that.
#include <hetpu/gpu_needs.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>
#include <vector>

#include "apps/fft2d/fft2d_codelets.h"
#include "apps/grn/grn_codelets.h"
#include "apps/grn/grn_search.h"
#include "apps/kmeans/kmeans_codelets.h"
#include "apps/kmeans/kmeans_kernels.h"
#include "apps/matmul/matmul_codelets.h"
#include "config.h"

namespace {

class StarpuCpuOnly : public ::testing::Environment {
public:
    void SetUp() override
    {
        setenv("STARPU_NCPU", "1", 1);
        setenv("STARPU_NOPENCL", "0", 1);
        setenv("STARPU_NCUDA", "0", 1);
        ASSERT_EQ(starpu_init(nullptr), 0);
        hetpu::matmul::codelets_init();
        ASSERT_EQ(hetpu::grn::codelets_init(), 0);
        ASSERT_EQ(hetpu::kmeans::codelets_init(), 0);
        ASSERT_EQ(hetpu::fft2d::codelets_init({256, 8192}), 0);
    }
    void TearDown() override
    {
        hetpu::fft2d::codelets_shutdown();
        hetpu::kmeans::codelets_shutdown();
        hetpu::grn::codelets_shutdown();
        hetpu::matmul::codelets_shutdown();
        starpu_shutdown();
    }
};
[[maybe_unused]] const auto *const environment = ::testing::AddGlobalTestEnvironment(new StarpuCpuOnly);

// A task of cl over handles, never submitted: only its needs are asked for.
struct Task {
    struct starpu_task *task = starpu_task_create();
    std::vector<starpu_data_handle_t> handles;
    Task(struct starpu_codelet *cl, std::vector<starpu_data_handle_t> h, void *arg = nullptr) : handles(std::move(h))
    {
        task->cl = cl;
        task->cl_arg = arg;
        for (size_t i = 0; i < handles.size(); ++i)
            task->handles[i] = handles[i];
    }
    ~Task()
    {
        task->destroy = 0;  // StarPU refuses to destroy a never-submitted task flagged for auto-destruction
        starpu_task_destroy(task);
        for (starpu_data_handle_t h : handles)
            starpu_data_unregister(h);
    }
    hetpu_gpu_needs needs()
    {
        hetpu_gpu_needs n{};
        EXPECT_EQ(hetpu_gpu_needs_of(task, &n), 1) << "the codelet declares no needs";
        return n;
    }
};

starpu_data_handle_t vector(std::vector<char> &bytes, uint32_t nx, size_t elem)
{
    bytes.resize(static_cast<size_t>(nx) * elem);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(bytes.data()), nx, elem);
    return h;
}

starpu_data_handle_t matrix(std::vector<char> &bytes, uint32_t rows, uint32_t cols, size_t elem)
{
    bytes.resize(static_cast<size_t>(rows) * cols * elem);
    starpu_data_handle_t h;
    starpu_matrix_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(bytes.data()), rows, rows, cols, elem);
    return h;
}

// cuBLAS's workspace bound, counted only where the matmul codelet has a CUDA version.
uint64_t with_cublas(uint64_t clblast_bytes)
{
#ifdef HETPU_HAVE_CUDA
    return std::max<uint64_t>(clblast_bytes, uint64_t(32) << 20);
#else
    return clblast_bytes;
#endif
}

}  // namespace

TEST(AppGpuNeeds, MatmulDoubleBlock)
{
    // C (100 x 30) = A (100 x 70) x B (70 x 30): 2 x 1 tiles of 64; every dimension padded
    // to 128 for CLBlast's temporary copies of A, B and C.
    std::vector<char> a, b, c;
    Task t(hetpu::matmul::codelet(hetpu::matmul::Precision::Double),
           {matrix(a, 100, 70, 8), matrix(b, 70, 30, 8), matrix(c, 100, 30, 8)});
    const hetpu_gpu_needs n = t.needs();
    EXPECT_EQ(n.blocks, 2u);
    EXPECT_EQ(n.threads_per_block, 256u);
    EXPECT_EQ(n.shared_mem_per_block, 2u * 64 * 32 * 8);
    EXPECT_EQ(n.scratch_bytes, with_cublas(3ull * 128 * 128 * 8));
}

TEST(AppGpuNeeds, MatmulSingleBlock)
{
    // C (256 x 129) = A (256 x 200) x B (200 x 129): 4 x 3 tiles; padded 256, 256, 256.
    std::vector<char> a, b, c;
    Task t(hetpu::matmul::codelet(hetpu::matmul::Precision::Single),
           {matrix(a, 256, 200, 4), matrix(b, 200, 129, 4), matrix(c, 256, 129, 4)});
    const hetpu_gpu_needs n = t.needs();
    EXPECT_EQ(n.blocks, 12u);
    EXPECT_EQ(n.threads_per_block, 256u);
    EXPECT_EQ(n.shared_mem_per_block, 2u * 64 * 32 * 4);
    EXPECT_EQ(n.scratch_bytes, with_cublas(3ull * 256 * 256 * 4));
}

TEST(AppGpuNeeds, GrnBlock)
{
    // 50 genes x 32 lanes = 1600 threads: 13 blocks of 128.
    const uint32_t genes = 50, samples = 20, lanes = hetpu::grn::lanes_for(genes);
    ASSERT_EQ(lanes, 32u);
    hetpu::grn::BlockArgs args{genes, samples, 1, 2, lanes, 1.0, 0, 1000};
    std::vector<char> levels, xlogx, hy, out;
    Task t(hetpu::grn::block_codelet(),
           {vector(levels, genes * samples, 1), vector(xlogx, samples + 1, 8), vector(hy, genes, 8),
            vector(out, static_cast<uint32_t>(hetpu::grn::block_output_size(genes, lanes)), 8)},
           &args);
    const hetpu_gpu_needs n = t.needs();
    EXPECT_EQ(n.blocks, 13u);
    EXPECT_EQ(n.threads_per_block, 128u);
    EXPECT_EQ(n.shared_mem_per_block, 0u);
    EXPECT_EQ(n.scratch_bytes, 0u);
}

TEST(AppGpuNeeds, KmeansBlock)
{
    // 1000 points, k = 3, d = 2: the labelling kernel is the larger, 8 blocks of 128.
    hetpu_kmeans_args args{3, 2};
    std::vector<char> x, c, partial, labels;
    Task t(hetpu::kmeans::assign_codelet(),
           {vector(x, 1000 * 2, 8), vector(c, 3 * 2, 8), vector(partial, 3 * 2 + 3 + 1, 8), vector(labels, 1000, 4)},
           &args);
    const hetpu_gpu_needs n = t.needs();
    EXPECT_EQ(n.blocks, 8u);
    EXPECT_EQ(n.threads_per_block, 128u);
    EXPECT_EQ(n.shared_mem_per_block, 0u);
    EXPECT_EQ(n.scratch_bytes, 0u);
}

TEST(AppGpuNeeds, KmeansTinyBlockManyClusters)
{
    // 10 points, k = 100, d = 4: the partial-result kernel (501 entries) is the larger.
    hetpu_kmeans_args args{100, 4};
    std::vector<char> x, c, partial, labels;
    Task t(hetpu::kmeans::assign_codelet(),
           {vector(x, 10 * 4, 8), vector(c, 100 * 4, 8), vector(partial, 100 * 4 + 100 + 1, 8), vector(labels, 10, 4)},
           &args);
    EXPECT_EQ(t.needs().blocks, 4u);
}

TEST(AppGpuNeeds, Fft2dShortRows)
{
    // 10 rows of 256: one block per row of 64 threads, the row (4 KiB) in shared memory,
    // one copy of the block (40 KiB) as library scratch.
    uint64_t length = 256;
    std::vector<char> z;
    Task t(hetpu::fft2d::codelet(), {vector(z, 10 * 256, 16)}, &length);
    const hetpu_gpu_needs n = t.needs();
    EXPECT_EQ(n.blocks, 10u);
    EXPECT_EQ(n.threads_per_block, 64u);
    EXPECT_EQ(n.shared_mem_per_block, 256u * 16);
    EXPECT_EQ(n.scratch_bytes, 10ull * 256 * 16);
}

TEST(AppGpuNeeds, Fft2dLongRows)
{
    // Rows of 8192: threads and shared memory at their caps (256, 2048 complex doubles).
    uint64_t length = 8192;
    std::vector<char> z;
    Task t(hetpu::fft2d::codelet(), {vector(z, 3 * 8192, 16)}, &length);
    const hetpu_gpu_needs n = t.needs();
    EXPECT_EQ(n.blocks, 3u);
    EXPECT_EQ(n.threads_per_block, 256u);
    EXPECT_EQ(n.shared_mem_per_block, 2048u * 16);
    EXPECT_EQ(n.scratch_bytes, 3ull * 8192 * 16);
}
