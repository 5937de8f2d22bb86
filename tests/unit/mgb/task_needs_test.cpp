// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gtest/gtest.h>

#include "sched_policies/mgb/core/task_needs.h"

namespace hetpu::mgb {
namespace {

GpuSpec v100() { return *gpu_preset("V100"); }

TaskNeeds needs(uint32_t blocks, uint32_t threads, uint32_t shared = 0)
{
    TaskNeeds n;
    n.bytes = 1;
    n.blocks = blocks;
    n.threads_per_block = threads;
    n.shared_mem_per_block = shared;
    return n;
}

TEST(TaskNeeds, WarpsPerBlockRoundsUpAndIsAtLeastOne)
{
    const GpuSpec s = v100();
    EXPECT_EQ(warps_per_block(needs(1, 0), s), 1u);  // unknown threads: one warp
    EXPECT_EQ(warps_per_block(needs(1, 1), s), 1u);
    EXPECT_EQ(warps_per_block(needs(1, 32), s), 1u);
    EXPECT_EQ(warps_per_block(needs(1, 33), s), 2u);
    EXPECT_EQ(warps_per_block(needs(1, 256), s), 8u);
    EXPECT_EQ(warps_per_block(needs(1, 1024), s), 32u);
    GpuSpec wide = s;
    wide.warp_size = 64;  // AMD-style wavefronts
    EXPECT_EQ(warps_per_block(needs(1, 65), wide), 2u);
}

TEST(TaskNeeds, BlocksPerSmLimitTakesTheTightestLimit)
{
    const GpuSpec s = v100();                                        // 64 warps, 32 blocks, 96 KiB shared per SM
    EXPECT_EQ(blocks_per_sm_limit(needs(1, 32), s), 32u);            // block limit: 32 (warps would allow 64)
    EXPECT_EQ(blocks_per_sm_limit(needs(1, 256), s), 8u);            // 64 / 8 warps
    EXPECT_EQ(blocks_per_sm_limit(needs(1, 1024), s), 2u);           // 64 / 32 warps
    EXPECT_EQ(blocks_per_sm_limit(needs(1, 96), s), 21u);            // 64 / 3 warps (96 threads)
    EXPECT_EQ(blocks_per_sm_limit(needs(1, 32, 48 * 1024), s), 2u);  // 96 KiB / 48 KiB
    EXPECT_EQ(blocks_per_sm_limit(needs(1, 32, 40 * 1024), s), 2u);  // floor(96 / 40)
    EXPECT_EQ(blocks_per_sm_limit(needs(1, 256, 4 * 1024), s), 8u);  // warps (8) beat shared (24)
}

TEST(TaskNeeds, BlocksPerSmLimitIsZeroWhenOneBlockExceedsAnSm)
{
    const GpuSpec s = v100();
    EXPECT_EQ(blocks_per_sm_limit(needs(1, 2048), s), 1u);  // exactly 64 warps fits
    EXPECT_EQ(blocks_per_sm_limit(needs(1, 2049), s), 0u);  // 65 warps
    EXPECT_EQ(blocks_per_sm_limit(needs(1, 32, 96 * 1024 + 1), s), 0u);
    GpuSpec unlimited = s;
    unlimited.shared_mem_per_sm = 0;  // 0: shared memory not limiting
    EXPECT_EQ(blocks_per_sm_limit(needs(1, 32, 1u << 30), unlimited), 32u);
}

TEST(TaskNeeds, FootprintOfASmallGridIsTheGrid)
{
    const Footprint fp = footprint_on(needs(100, 256, 1024), v100());
    EXPECT_TRUE(fp.runnable);
    EXPECT_EQ(fp.blocks, 100u);
    EXPECT_EQ(fp.warps_per_block, 8u);
    EXPECT_EQ(fp.shared_mem_per_block, 1024u);
    EXPECT_EQ(fp.warps(), 800u);
}

TEST(TaskNeeds, FootprintOfALargeGridIsOneResidentWave)
{
    // 256 threads: 8 blocks per SM, 80 SMs: a wave is 640 blocks = 5120 warps = the whole V100.
    const Footprint fp = footprint_on(needs(100000, 256), v100());
    EXPECT_TRUE(fp.runnable);
    EXPECT_EQ(fp.blocks, 640u);
    EXPECT_EQ(fp.warps(), v100().max_warps());
    // Shared memory limiting: 2 blocks per SM => 160 blocks.
    EXPECT_EQ(footprint_on(needs(1000, 32, 48 * 1024), v100()).blocks, 160u);
    // Exactly one wave stays one wave.
    EXPECT_EQ(footprint_on(needs(640, 256), v100()).blocks, 640u);
}

TEST(TaskNeeds, UnknownLaunchFillsTheWholeDevice)
{
    TaskNeeds n;
    n.bytes = 1;
    n.threads_per_block = 1024;  // ignored without blocks
    n.shared_mem_per_block = 4096;
    const Footprint fp = footprint_on(n, v100());
    EXPECT_TRUE(fp.runnable);
    EXPECT_EQ(fp.blocks, 80u);
    EXPECT_EQ(fp.warps_per_block, 64u);
    EXPECT_EQ(fp.shared_mem_per_block, 0u);
    EXPECT_EQ(fp.warps(), v100().max_warps());
}

TEST(TaskNeeds, FootprintOfABlockLargerThanAnSmIsNotRunnable)
{
    const Footprint fp = footprint_on(needs(4, 4096), v100());
    EXPECT_FALSE(fp.runnable);
    EXPECT_EQ(fp.blocks, 0u);
    EXPECT_FALSE(footprint_on(needs(4, 32, 200 * 1024), v100()).runnable);
    // The same kernel runs where an SM is big enough: H100 has 228 KiB.
    EXPECT_TRUE(footprint_on(needs(4, 32, 200 * 1024), *gpu_preset("H100")).runnable);
}

}  // namespace
}  // namespace hetpu::mgb
