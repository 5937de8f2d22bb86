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
    r.hold(0, t1);
    EXPECT_EQ(r.new_bytes(0, t2), 20u) << "A is already held on device 0";
    EXPECT_EQ(r.new_bytes(1, t2), 120u) << "device 1 holds nothing";
    r.hold(0, t2);
    EXPECT_EQ(r.holders(0, A), 2u);
    r.drop(0, t1);
    EXPECT_EQ(r.holders(0, A), 1u) << "t2 still holds A";
    EXPECT_EQ(r.holders(0, B), 0u);
    EXPECT_EQ(r.new_bytes(0, t1), 10u);
    r.drop(0, t2);
    EXPECT_EQ(r.new_bytes(0, t1), 110u);
}

TEST(HandleResidency, HandleNamedTwiceByOneTaskCountsOnce)
{
    HandleResidency r(1);
    const std::vector<HandleUse> t = {{A, 64}, {A, 64}, {B, 8}};
    EXPECT_EQ(r.new_bytes(0, t), 72u);
    r.hold(0, t);
    EXPECT_EQ(r.holders(0, A), 1u);
    r.drop(0, t);
    EXPECT_EQ(r.holders(0, A), 0u);
}
