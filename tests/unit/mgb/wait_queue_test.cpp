// SPDX-License-Identifier: LGPL-2.1-or-later
// WaitQueue: arrival order, backfilling past tasks that do not fit, and the aging bound
// that keeps a large task from starving behind a stream of small ones.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "sched_policies/mgb/core/wait_queue.h"

namespace hetpu::mgb {
namespace {

using Ids = std::vector<uint64_t>;

TEST(WaitQueue, KeepsArrivalOrderAndRemoves)
{
    WaitQueue q;
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.aging_limit(), 16u);
    for (uint64_t id : {5, 3, 9, 1})
        q.push(id);
    EXPECT_EQ(q.size(), 4u);
    EXPECT_EQ(q.ids(), (Ids{5, 3, 9, 1}));
    EXPECT_TRUE(q.remove(9));
    EXPECT_FALSE(q.remove(9));
    EXPECT_FALSE(q.remove(42));
    EXPECT_EQ(q.ids(), (Ids{5, 3, 1}));
}

TEST(WaitQueue, DrainStartsEverythingThatFitsOldestFirst)
{
    WaitQueue q;
    for (uint64_t id : {1, 2, 3})
        q.push(id);
    Ids tried;
    const Ids started = q.drain([&](uint64_t id) {
        tried.push_back(id);
        return true;
    });
    EXPECT_EQ(started, (Ids{1, 2, 3}));
    EXPECT_EQ(tried, (Ids{1, 2, 3}));
    EXPECT_TRUE(q.empty());
    EXPECT_TRUE(q.drain([](uint64_t) { return true; }).empty());
}

TEST(WaitQueue, BackfillsPastATaskThatDoesNotFit)
{
    WaitQueue q(4);
    for (uint64_t id : {1, 2, 3, 4})
        q.push(id);
    // 10 units free; task 1 needs 12, the others 3 each: 2, 3, 4 start (9 units).
    std::map<uint64_t, unsigned> need{{1, 12}, {2, 3}, {3, 3}, {4, 3}};
    unsigned free = 10;
    auto try_start = [&](uint64_t id) {
        if (need[id] > free)
            return false;
        free -= need[id];
        return true;
    };
    EXPECT_EQ(q.drain(try_start), (Ids{2, 3, 4}));
    EXPECT_EQ(q.ids(), (Ids{1}));
    EXPECT_EQ(free, 1u);
}

TEST(WaitQueue, AgingLimitZeroIsStrictFifo)
{
    WaitQueue q(0);
    for (uint64_t id : {1, 2, 3})
        q.push(id);
    Ids tried;
    auto try_start = [&](uint64_t id) {
        tried.push_back(id);
        return id != 1;  // only the oldest does not fit
    };
    EXPECT_TRUE(q.drain(try_start).empty());
    EXPECT_EQ(tried, (Ids{1}));  // nothing younger is even tried
    EXPECT_EQ(q.ids(), (Ids{1, 2, 3}));
    // Once the head starts, the rest follow in order.
    EXPECT_EQ(q.drain([](uint64_t) { return true; }), (Ids{1, 2, 3}));
}

TEST(WaitQueue, AgingStopsBackfillingOnceTheOldestWasBypassedEnough)
{
    WaitQueue q(2);
    for (uint64_t id : {1, 2, 3, 4, 5})
        q.push(id);
    auto all_but_1 = [](uint64_t id) { return id != 1; };
    // Two starts bypass task 1 twice: the limit. Tasks 4 and 5 must wait behind it.
    EXPECT_EQ(q.drain(all_but_1), (Ids{2, 3}));
    EXPECT_EQ(q.ids(), (Ids{1, 4, 5}));
    // Later drains try only the head until it starts.
    Ids tried;
    EXPECT_TRUE(q.drain([&](uint64_t id) {
                     tried.push_back(id);
                     return id != 1;
                 }).empty());
    EXPECT_EQ(tried, (Ids{1}));
    // The head starts: its counter leaves with it, the young tasks start again.
    EXPECT_EQ(q.drain([](uint64_t) { return true; }), (Ids{1, 4, 5}));
}

TEST(WaitQueue, BypassCountsEveryOlderWaitingTask)
{
    WaitQueue q(1);
    for (uint64_t id : {1, 2, 3, 4})
        q.push(id);
    // 1 and 2 do not fit; 3 starts, bypassing both (each now at the limit of 1): 4 waits.
    auto fits = [](uint64_t id) { return id >= 3; };
    EXPECT_EQ(q.drain(fits), (Ids{3}));
    EXPECT_EQ(q.ids(), (Ids{1, 2, 4}));
    // Task 1 leaves (say it was cancelled); task 2, also bypassed once, now blocks 4.
    ASSERT_TRUE(q.remove(1));
    EXPECT_TRUE(q.drain(fits).empty());
    EXPECT_EQ(q.ids(), (Ids{2, 4}));
}

TEST(WaitQueue, AYoungerTaskIsNotAgedByStartsBeforeItArrived)
{
    WaitQueue q(1);
    q.push(1);
    q.push(2);
    EXPECT_EQ(q.drain([](uint64_t id) { return id == 2; }), (Ids{2}));  // 1 bypassed once
    ASSERT_TRUE(q.remove(1));
    q.push(3);
    q.push(4);
    // 3 is the oldest now, with no bypass yet: one backfill (4) is allowed.
    EXPECT_EQ(q.drain([](uint64_t id) { return id != 3; }), (Ids{4}));
}

// A node with 10 units; a large task needs all 10; a small task needing 2 arrives at every
// tick and runs for 3 ticks. Without aging the small ones keep the node from ever being
// empty; with an aging limit the large task starts within a bounded time.
struct Simulation {
    unsigned free = 10;
    std::map<uint64_t, unsigned> need;
    std::multimap<unsigned, uint64_t> ends;  // tick -> task
    unsigned tick = 0;

    bool try_start(uint64_t id)
    {
        if (need[id] > free)
            return false;
        free -= need[id];
        ends.emplace(tick + 3, id);
        return true;
    }

    // Runs `ticks` ticks; returns the tick at which task `watch` started (or ~0u).
    unsigned run(WaitQueue &q, unsigned ticks, uint64_t watch)
    {
        unsigned started_at = ~0u;
        uint64_t next_id = 100;
        for (tick = 0; tick < ticks; ++tick) {
            for (auto it = ends.begin(); it != ends.end() && it->first <= tick; it = ends.erase(it))
                free += need[it->second];
            need[next_id] = 2;
            q.push(next_id++);
            for (uint64_t id : q.drain([this](uint64_t id) { return try_start(id); }))
                if (id == watch)
                    started_at = tick;
        }
        return started_at;
    }
};

TEST(WaitQueue, LargeTaskStarvesWithoutAgingBound)
{
    WaitQueue q(~0u);  // effectively no aging: pure backfilling
    Simulation sim;
    sim.need[1] = 10;
    sim.need[50] = 2;  // two small tasks ahead of the large one keep the node busy
    q.push(50);
    q.push(1);
    EXPECT_EQ(sim.run(q, 500, 1), ~0u);  // never starts
    EXPECT_EQ(q.ids().front(), 1u);
}

TEST(WaitQueue, AgingBoundLetsALargeTaskStart)
{
    for (unsigned limit : {0u, 1u, 4u, 16u}) {
        SCOPED_TRACE(limit);
        WaitQueue q(limit);
        Simulation sim;
        sim.need[1] = 10;
        sim.need[50] = 2;
        q.push(50);
        q.push(1);
        const unsigned t = sim.run(q, 500, 1);
        // After `limit` bypasses nothing younger starts; the running small tasks end within
        // 3 ticks (one start per tick at most), then the large task starts.
        EXPECT_LE(t, limit + 3);
        // And the queue keeps flowing after it.
        EXPECT_LT(q.size(), 10u);
    }
}

}  // namespace
}  // namespace hetpu::mgb
