// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/region_state.h"

#include <gtest/gtest.h>

using hetpu::ckpt::IllegalTransition;
using hetpu::ckpt::RegionLifecycle;
using S = hetpu::ckpt::RegionState;

TEST(RegionState, CheckpointPathThenRestoreFromCache)
{
    RegionLifecycle r(S::Writing);
    r.advance(S::Cached);
    r.advance(S::Flushed);
    r.advance(S::Ready);  // a cached checkpoint hinted for restore serves it directly
    r.advance(S::Consumed);
    r.advance(S::Evictable);
    EXPECT_EQ(r.state(), S::Evictable);
}

TEST(RegionState, PrefetchPath)
{
    RegionLifecycle r(S::Prefetching);
    EXPECT_EQ(r.state(), S::Prefetching);
    ASSERT_NO_THROW(r.advance(S::Ready));
    EXPECT_EQ(r.state(), S::Ready);
    EXPECT_TRUE(hetpu::ckpt::is_readable(r.state()));
    ASSERT_NO_THROW(r.advance(S::Consumed));
    EXPECT_EQ(r.state(), S::Consumed);
    ASSERT_NO_THROW(r.advance(S::Ready));  // restored a second time
    EXPECT_EQ(r.state(), S::Ready);
    ASSERT_NO_THROW(r.advance(S::Consumed));
    ASSERT_NO_THROW(r.advance(S::Evictable));
    EXPECT_EQ(r.state(), S::Evictable);
    // A region still being read back from a lower tier serves no restore and is no victim.
    RegionLifecycle p(S::Prefetching);
    EXPECT_FALSE(hetpu::ckpt::is_readable(p.state()));
    EXPECT_FALSE(hetpu::ckpt::may_evict(p.state()));
    EXPECT_THROW(p.advance(S::Consumed), IllegalTransition) << "a restore cannot consume bytes not yet read back";
}

TEST(RegionState, IllegalTransitionsAreRejected)
{
    const S all[] = {S::Writing, S::Cached, S::Flushed, S::Prefetching, S::Ready, S::Consumed, S::Evictable};
    int legal = 0;
    for (S from : all)
        for (S to : all)
            legal += hetpu::ckpt::is_legal_transition(from, to);
    EXPECT_EQ(legal, 9) << "the table gained or lost an edge";
    RegionLifecycle w(S::Writing);
    EXPECT_THROW(w.advance(S::Flushed), IllegalTransition) << "cannot skip the cached state";
    EXPECT_THROW(w.advance(S::Evictable), IllegalTransition) << "a region being written is never evicted";
    RegionLifecycle c(S::Writing);
    c.advance(S::Cached);
    EXPECT_THROW(c.advance(S::Evictable), IllegalTransition) << "unflushed data is never evicted";
    RegionLifecycle e(S::Prefetching);
    e.advance(S::Ready);
    e.advance(S::Evictable);
    EXPECT_THROW(e.advance(S::Ready), IllegalTransition) << "evictable is terminal";
    EXPECT_THROW(RegionLifecycle(S::Cached), IllegalTransition) << "regions are born writing or prefetching";
}

TEST(RegionState, EvictionAndReadPredicates)
{
    EXPECT_FALSE(hetpu::ckpt::may_evict(S::Writing));
    EXPECT_FALSE(hetpu::ckpt::may_evict(S::Cached));
    EXPECT_FALSE(hetpu::ckpt::may_evict(S::Prefetching));
    EXPECT_TRUE(hetpu::ckpt::may_evict(S::Flushed));
    EXPECT_TRUE(hetpu::ckpt::may_evict(S::Consumed));
    EXPECT_FALSE(hetpu::ckpt::is_readable(S::Prefetching));
    EXPECT_TRUE(hetpu::ckpt::is_readable(S::Cached));
}
