// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/priority_fifo.h"

#include <gtest/gtest.h>

#include <climits>
#include <vector>

namespace {

using hetpu::PriorityFifo;

std::vector<int> drain(PriorityFifo<int> &q)
{
    std::vector<int> out;
    while (auto e = q.take_first([](int) { return true; }))
        out.push_back(e->second);
    return out;
}

}  // namespace

TEST(PriorityFifo, HighestPriorityFirstThenArrivalOrder)
{
    PriorityFifo<int> q;
    const int priorities[] = {0, 2, -1, 2, 0, 5, -3, 5, 0};
    for (int i = 0; i < 9; ++i)
        q.push(priorities[i], i);
    EXPECT_EQ(q.size(), 9u);
    EXPECT_EQ(drain(q), (std::vector<int>{5, 7, 1, 3, 0, 4, 8, 2, 6}));
    EXPECT_TRUE(q.empty());
}

TEST(PriorityFifo, ATakerSkipsWhatItCannotRunWithoutBlockingIt)
{
    // Even items: runnable by the taker; odd ones only by another. The most urgent item the
    // taker can run comes out, and the skipped ones keep their places for the other.
    PriorityFifo<int> q;
    q.push(9, 1);
    q.push(1, 2);
    q.push(9, 3);
    q.push(7, 4);
    auto e = q.take_first([](int v) { return v % 2 == 0; });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->second, 4);
    EXPECT_FALSE(q.take_first([](int v) { return v == 42; }));
    EXPECT_EQ(drain(q), (std::vector<int>{1, 3, 2}));
}

TEST(PriorityFifo, ExtremePrioritiesOrderRight)
{
    PriorityFifo<int> q;
    q.push(0, 0);
    q.push(INT_MIN, 1);
    q.push(INT_MAX, 2);
    EXPECT_EQ(drain(q), (std::vector<int>{2, 0, 1}));
}
