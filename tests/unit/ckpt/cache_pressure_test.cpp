// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/cache_pressure.h"
#include "ckpt_backend/core/device_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

namespace hetpu::ckpt {
namespace {

constexpr std::uint64_t kNone = UINT64_MAX;

TEST(PressureRelease, GivesBackOnTheCheapestDeviceItsCacheCovers)
{
    // One waiter: 30 lacking on device 0, 20 on device 1, 10 on device 2 (whose cache holds 5).
    const auto give = plan_pressure_release({{30, 20, 10}}, {100, 100, 5});
    EXPECT_EQ(give, (std::vector<std::uint64_t>{0, 20, 0}));
}

TEST(PressureRelease, NothingForWaitsTheCachesCannotEnd)
{
    EXPECT_EQ(plan_pressure_release({{0, 0}}, {64, 64}), (std::vector<std::uint64_t>{0, 0})) << "a wait for compute";
    EXPECT_EQ(plan_pressure_release({{kNone, 80}}, {64, 64}), (std::vector<std::uint64_t>{0, 0}))
        << "another process's limit binds on 0, and 80 is more than device 1's cache";
    EXPECT_EQ(plan_pressure_release({}, {64}), (std::vector<std::uint64_t>{0})) << "nobody waits";
}

TEST(PressureRelease, SeveralWaitersTakeTheLargestNeedPerDevice)
{
    const auto give = plan_pressure_release({{10, 0}, {25, 0}, {0, 5}, {7, 7}}, {64, 64});
    EXPECT_EQ(give, (std::vector<std::uint64_t>{25, 5})) << "the tie 7/7 goes to device 0, under 25";
}

TEST(RegrowBackoff, WaitsAfterPressureAndDoublesPerRound)
{
    RegrowBackoff b(1.0, 4.0);
    EXPECT_FALSE(b.may_grow(0)) << "never shrunk: nothing to grow back";
    b.pressure(10);
    EXPECT_FALSE(b.may_grow(10.5));
    b.pressure(10.75);  // the same round: the wait restarts, it does not double
    EXPECT_EQ(b.wait_s(), 1.0);
    EXPECT_FALSE(b.may_grow(11.5));
    EXPECT_TRUE(b.may_grow(11.75));
    b.pressure(12);  // the regrown cache met pressure again: a new round
    EXPECT_EQ(b.wait_s(), 2.0);
    EXPECT_FALSE(b.may_grow(13.5));
    EXPECT_TRUE(b.may_grow(14));
    b.pressure(14.5);
    b.pressure(20);
    EXPECT_EQ(b.wait_s(), 4.0) << "at the ceiling";
    b.pressure(25);
    EXPECT_EQ(b.wait_s(), 4.0);
    b.pressure(40);  // quiet for over twice the ceiling: starts over
    EXPECT_EQ(b.wait_s(), 1.0);
}

TEST(RegrowBackoff, ZeroNeverGrowsAgainAndBadBoundsAreRefused)
{
    RegrowBackoff never(0, 0);
    never.pressure(1);
    EXPECT_FALSE(never.may_grow(1e9));
    EXPECT_THROW(RegrowBackoff(-1, 1), std::invalid_argument);
    EXPECT_THROW(RegrowBackoff(2, 1), std::invalid_argument);
}

TEST(DeviceCacheRegrow, ChunksGivenBackAreWantedAgainAfterResume)
{
    DeviceCache c(4 << 10, 1 << 10, 1 << 10);  // 4 chunks of one slot
    while (c.chunks_wanted() > 0)
        c.add_chunk();
    c.remove_chunk(1);
    EXPECT_EQ(c.chunks_wanted(), 0u) << "stopped by the removal";
    c.resume_growing();
    EXPECT_EQ(c.chunks_wanted(), 1u);
    EXPECT_EQ(c.add_chunk(), 4u) << "a new index: slots of other chunks stay valid";
    EXPECT_EQ(c.chunks_wanted(), 0u);
    EXPECT_EQ(c.total_slots(), 4u);
    EXPECT_FALSE(c.chunk_present(1));
}

}  // namespace
}  // namespace hetpu::ckpt
