// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gtest/gtest.h>

#include "sched_policies/mgb/core/handle_residency.h"

using hetpu::mgb::HandleResidency;
using hetpu::mgb::HandleUse;

namespace {
const int a_ = 0, b_ = 0, c_ = 0;
const void *const A = &a_, *const B = &b_, *const C = &c_;
}  // namespace

TEST(HandleResidency, SharedHandleCountsOncePerDevice)
{
    HandleResidency r(2);
    const std::vector<HandleUse> t1 = {{A, 100}, {B, 10}};
    const std::vector<HandleUse> t2 = {{A, 100}, {C, 20}};
    EXPECT_EQ(r.new_bytes(0, t1), 110u);
    r.hold(0, 1, t1);
    EXPECT_EQ(r.new_bytes(0, t2), 20u) << "A is already held on device 0";
    EXPECT_EQ(r.new_bytes(1, t2), 120u) << "device 1 holds nothing";
    r.hold(0, 2, t2);
    EXPECT_EQ(r.holders(0, A), 2u);
    r.drop(0, 1, t1);
    EXPECT_EQ(r.holders(0, A), 1u) << "t2 still holds A";
    EXPECT_EQ(r.holders(0, B), 0u);
    EXPECT_EQ(r.new_bytes(0, t1), 10u);
    r.drop(0, 2, t2);
    EXPECT_EQ(r.new_bytes(0, t1), 110u);
}

TEST(HandleResidency, HandleNamedTwiceByOneTaskCountsOnce)
{
    HandleResidency r(1);
    const std::vector<HandleUse> t = {{A, 64}, {A, 64}, {B, 8}};
    EXPECT_EQ(r.new_bytes(0, t), 72u);
    r.hold(0, 7, t);
    EXPECT_EQ(r.holders(0, A), 1u);
    EXPECT_TRUE(r.drop(0, 7, t).empty());
    EXPECT_EQ(r.holders(0, A), 0u);
}

// The first task to hold a shared handle pays for it; when it ends
// before the others, the next holder pays from then on (and only then).
TEST(HandleResidency, PayerEndingFirstHandsTheBytesToAHolderStillUsingThem)
{
    HandleResidency r(1);
    const std::vector<HandleUse> t = {{A, 8}, {B, 4}};
    const std::vector<HandleUse> u = {{A, 8}, {C, 4}};
    r.hold(0, 11, t);
    r.hold(0, 12, u);
    r.hold(0, 13, u);
    EXPECT_EQ(r.payer(0, A), 11u);
    const auto handed = r.drop(0, 11, t);
    ASSERT_EQ(handed.size(), 1u) << "B had no other holder: nothing to hand over";
    EXPECT_EQ(handed[0].to_grant, 12u);
    EXPECT_EQ(handed[0].bytes, 8u);
    EXPECT_EQ(r.payer(0, A), 12u);
    // A holder that is not the payer leaves without moving anything.
    EXPECT_TRUE(r.drop(0, 13, u).empty());
    EXPECT_EQ(r.payer(0, A), 12u);
    EXPECT_TRUE(r.drop(0, 12, u).empty()) << "the last holder takes the data with it";
    EXPECT_EQ(r.holders(0, A), 0u);
}
