// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/core/block_dispatcher.h"

#include <gtest/gtest.h>

#include <deque>
#include <algorithm>
#include <map>
#include <set>
#include <vector>

using namespace hetpu;

namespace {

// A planner that gives each worker its own block size; 0 declines the worker.
class PerWorkerPlanner : public BlockPlanner {
public:
    explicit PerWorkerPlanner(std::map<int, uint64_t> sizes) : sizes_(std::move(sizes)) {}
    std::string name() const override { return "per-worker"; }
    bool assigns_workers() const override { return true; }
    uint64_t next_block(int worker, uint64_t) override { return sizes_[worker]; }
    void block_done(const BlockDone &d) override { done.push_back(d); }
    std::vector<BlockDone> done;

private:
    std::map<int, uint64_t> sizes_;
};

// Drives a dispatcher to completion, completing the oldest block first (FIFO), and
// checks the invariants on the way. Returns elements processed per worker.
std::map<int, uint64_t> drive(BlockDispatcher &d, const BlockRules &rules, std::vector<int> &coverage,
                              unsigned max_in_flight_per_worker)
{
    coverage.assign(rules.total, 0);
    std::deque<Assignment> pending;
    std::map<int, unsigned> per_worker;
    std::map<int, uint64_t> elements;
    auto accept = [&](const std::vector<Assignment> &as) {
        for (const auto &a : as) {
            pending.push_back(a);
            ++per_worker[a.worker];
            if (a.worker >= 0) {
                EXPECT_LE(per_worker[a.worker], max_in_flight_per_worker);
            }
        }
    };
    accept(d.start());
    int steps = 0;
    while (!pending.empty()) {
        if (++steps > 100000) {
            ADD_FAILURE() << "runaway dispatcher";
            break;
        }
        Assignment a = pending.front();
        pending.pop_front();
        --per_worker[a.worker];
        for (uint64_t i = a.offset; i < a.offset + a.count; ++i)
            ++coverage[i];
        // Pool blocks complete on an arbitrary worker: use 7.
        int worker = a.worker >= 0 ? a.worker : 7;
        elements[worker] += a.count;
        accept(d.complete({worker, a.offset, a.count, 0.01, 0.0}));
    }
    EXPECT_TRUE(d.finished());
    return elements;
}

}  // namespace

TEST(BlockDispatcher, FixedPoolKeepsTwoBlocksPerWorkerAndCoversEverything)
{
    BlockRules rules{1000, 1, 1};
    normalize_block_rules(rules);
    FixedBlockPlanner planner(30);
    BlockDispatcher d(rules, planner, {0, 1, 2});
    std::vector<Assignment> first = d.start();
    EXPECT_EQ(first.size(), 6u) << "depth 2 x 3 workers";
    for (const auto &a : first) {
        EXPECT_EQ(a.worker, -1) << "fixed blocks are placed by the StarPU policy";
        EXPECT_EQ(a.count, 30u);
    }

    BlockDispatcher fresh(rules, planner, {0, 1, 2});
    std::vector<int> coverage;
    drive(fresh, rules, coverage, 2);
    for (uint64_t i = 0; i < rules.total; ++i)
        ASSERT_EQ(coverage[i], 1) << "element " << i << " processed " << coverage[i] << " times";
}

TEST(BlockDispatcher, AssigningPlannerPinsBlocksAndRespectsDepth)
{
    BlockRules rules{10000, 4, 4};
    normalize_block_rules(rules);
    PerWorkerPlanner planner({{0, 100}, {1, 300}});
    BlockDispatcher d(rules, planner, {0, 1});
    std::vector<Assignment> first = d.start();
    ASSERT_EQ(first.size(), 4u);
    // Every worker gets its first block before anyone gets a second.
    EXPECT_EQ(first[0].worker, 0);
    EXPECT_EQ(first[1].worker, 1);
    EXPECT_EQ(first[0].count, 100u);
    EXPECT_EQ(first[1].count, 300u);

    PerWorkerPlanner planner2({{0, 100}, {1, 300}});
    BlockDispatcher d2(rules, planner2, {0, 1});
    std::vector<int> coverage;
    auto elements = drive(d2, rules, coverage, BlockDispatcher::kDepth);
    for (uint64_t i = 0; i < rules.total; ++i)
        ASSERT_EQ(coverage[i], 1) << i;
    EXPECT_EQ(elements[0] + elements[1], rules.total);
    EXPECT_GT(elements[1], elements[0]) << "bigger blocks, same completion pace";
    uint64_t reported = 0;
    for (const auto &done : planner2.done)
        reported += done.count;
    EXPECT_EQ(reported, rules.total) << "every block is reported back to the planner";
}

TEST(BlockDispatcher, DecliningOneWorkerIsAllowed)
{
    BlockRules rules{500, 1, 1};
    normalize_block_rules(rules);
    PerWorkerPlanner planner({{0, 50}, {1, 0}});
    BlockDispatcher d(rules, planner, {0, 1});
    std::vector<int> coverage;
    auto elements = drive(d, rules, coverage, 2);
    EXPECT_EQ(elements[0], 500u);
    EXPECT_EQ(elements[1], 0u);
    EXPECT_FALSE(d.forced_remainder());
}

TEST(BlockDispatcher, DecliningEveryoneForcesTheRemainderInsteadOfHanging)
{
    BlockRules rules{500, 1, 1};
    normalize_block_rules(rules);
    PerWorkerPlanner planner({{0, 0}, {1, 0}});
    BlockDispatcher d(rules, planner, {0, 1});
    std::vector<int> coverage;
    auto elements = drive(d, rules, coverage, 2);
    EXPECT_TRUE(d.forced_remainder());
    EXPECT_EQ(elements[0] + elements[1], 500u);
    for (int c : coverage)
        ASSERT_EQ(c, 1);
}

TEST(BlockDispatcher, StopAndAbandonLetTheRunFinishAfterAnError)
{
    BlockRules rules{1000, 1, 1};
    normalize_block_rules(rules);
    FixedBlockPlanner planner(10);
    BlockDispatcher d(rules, planner, {0, 1});
    std::vector<Assignment> first = d.start();
    ASSERT_EQ(first.size(), 4u);
    d.abandon(first[0]);
    d.stop();
    EXPECT_FALSE(d.finished());
    for (size_t i = 1; i < first.size(); ++i)
        EXPECT_TRUE(d.complete({0, first[i].offset, first[i].count, 0, 0}).empty()) << "no new block after stop";
    EXPECT_TRUE(d.finished());
    EXPECT_GT(d.remaining(), 0u);
}

// A rank whose share ran dry gets a range lent by another rank: the idle workers are fed
// again at once, and the dispatcher finishes only when the lent range is done too.
TEST(BlockDispatcher, ALentRangeRestartsAnIdleRank)
{
    BlockRules rules{1000, 1, 1};
    normalize_block_rules(rules);
    PerWorkerPlanner planner({{0, 50}, {1, 50}});
    BlockDispatcher d(rules, planner, {0, 1}, Block{0, 100});
    std::vector<Assignment> first = d.start();
    ASSERT_EQ(first.size(), 2u) << "the share holds two blocks of 50";
    for (const Assignment &a : first)
        EXPECT_TRUE(d.complete({a.worker, a.offset, a.count}).empty());
    EXPECT_TRUE(d.finished());

    std::vector<Assignment> more = d.add_range(600, 200);
    EXPECT_FALSE(d.finished());
    ASSERT_EQ(more.size(), 4u) << "two blocks in flight for each of the two workers";
    uint64_t covered = 0;
    for (const Assignment &a : more) {
        EXPECT_GE(a.offset, 600u);
        EXPECT_LE(a.offset + a.count, 800u);
        covered += a.count;
        d.complete({a.worker, a.offset, a.count});
    }
    EXPECT_EQ(covered, 200u);
    EXPECT_TRUE(d.finished());
}

TEST(BlockDispatcher, TheTailHandedAwayIsNeverDispatchedHere)
{
    BlockRules rules{1000, 1, 1};
    normalize_block_rules(rules);
    PerWorkerPlanner planner(std::map<int, uint64_t>{{0, 100}});
    BlockDispatcher d(rules, planner, {0}, Block{0, 1000});
    std::vector<Assignment> first = d.start();
    Block tail = d.take_tail(700, [](const Block &) { return true; });
    EXPECT_EQ(tail.offset, 300u);
    EXPECT_EQ(tail.count, 700u);
    std::deque<Assignment> pending(first.begin(), first.end());
    uint64_t done = 0;
    while (!pending.empty()) {
        Assignment a = pending.front();
        pending.pop_front();
        EXPECT_LT(a.offset + a.count, 301u) << "block [" << a.offset << ", " << a.offset + a.count << ")";
        done += a.count;
        for (const Assignment &n : d.complete({a.worker, a.offset, a.count}))
            pending.push_back(n);
    }
    EXPECT_EQ(done, 300u);
    EXPECT_TRUE(d.finished());
}

TEST(BlockDispatcher, IdsAreUniqueFromOneAndComeBackInCompletions)
{
    BlockRules rules{1000, 1, 1};
    PerWorkerPlanner planner({{0, 100}, {1, 100}});
    BlockDispatcher d(rules, planner, {0, 1});
    d.set_backup_all(false);
    std::vector<Assignment> first = d.start();
    ASSERT_EQ(first.size(), 4u);
    std::set<uint64_t> ids;
    for (const auto &a : first) {
        EXPECT_GE(a.id, 1u);
        EXPECT_FALSE(a.backup);
        ids.insert(a.id);
    }
    EXPECT_EQ(ids.size(), 4u);
    EXPECT_TRUE(d.claim(first[0].id));
    EXPECT_FALSE(d.claim(first[0].id)) << "a range is kept once";
    BlockDone done{first[0].worker, first[0].offset, first[0].count, 0.1, 0, 0.1, 0, first[0].id, false};
    std::vector<Assignment> next = d.complete(done);
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(ids.count(next[0].id), 0u);
    EXPECT_FALSE(d.claim(first[0].id)) << "a completed id is unknown";
}

TEST(BlockDispatcher, BackupAllCopiesEveryBlockOnAnotherWorkerAndKeepsTheFirstToEnd)
{
    BlockRules rules{400, 1, 1};
    PerWorkerPlanner planner({{0, 100}, {1, 100}});
    BlockDispatcher d(rules, planner, {0, 1});
    d.set_backup_all(true);
    std::deque<Assignment> pending;
    for (const auto &a : d.start())
        pending.push_back(a);
    std::vector<int> kept(rules.total, 0);
    unsigned copies = 0, losers = 0;
    while (!pending.empty()) {
        // The copy of each block ends first: it is the one kept.
        auto it = std::find_if(pending.begin(), pending.end(), [](const Assignment &a) { return a.backup; });
        if (it == pending.end())
            it = pending.begin();
        Assignment a = *it;
        pending.erase(it);
        if (a.backup) {
            ++copies;
            auto original = std::find_if(pending.begin(), pending.end(), [&](const Assignment &o) {
                return !o.backup && o.offset == a.offset && o.count == a.count;
            });
            ASSERT_NE(original, pending.end()) << "a copy follows its block";
            EXPECT_NE(original->worker, a.worker);
        }
        d.started(a.id, 0);
        const bool keep = d.claim(a.id);
        if (keep)
            for (uint64_t i = a.offset; i < a.offset + a.count; ++i)
                ++kept[i];
        else
            ++losers;
        BlockDone done{a.worker, a.offset, a.count, 0.1, 0, 0.1, 0, a.id, a.backup};
        for (const auto &n : d.complete(done))
            pending.push_back(n);
    }
    EXPECT_TRUE(d.finished());
    EXPECT_EQ(copies, 4u);
    EXPECT_EQ(losers, 4u);
    for (int k : kept)
        ASSERT_EQ(k, 1);
    EXPECT_EQ(planner.done.size(), 8u) << "losing copies still report their measurement";
}

TEST(BlockDispatcher, FinishesWithALosingCopyStillRunning)
{
    BlockRules rules{100, 1, 1};
    PerWorkerPlanner planner({{0, 100}, {1, 100}});
    BlockDispatcher d(rules, planner, {0, 1});
    d.set_backup_all(true);
    std::vector<Assignment> first = d.start();
    ASSERT_EQ(first.size(), 2u);
    const Assignment &copy = first[0].backup ? first[0] : first[1];
    const Assignment &block = first[0].backup ? first[1] : first[0];
    EXPECT_FALSE(d.finished());
    EXPECT_TRUE(d.claim(block.id));
    d.complete(BlockDone{block.worker, block.offset, block.count, 0.1, 0, 0.1, 0, block.id, false});
    EXPECT_TRUE(d.finished()) << "every element is done once";
    EXPECT_EQ(d.copies_running(), std::vector<uint64_t>{copy.id});
    EXPECT_FALSE(d.claim(copy.id));
    d.complete(BlockDone{copy.worker, copy.offset, copy.count, 0.2, 0, 0.2, 0, copy.id, true});
    EXPECT_TRUE(d.copies_running().empty());
    EXPECT_EQ(d.in_flight(), 0u);
}
