// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC planner: What a completed block teaches the planner: refits prepared outside the runner's lock
// (PlannerExtensions::prepare_refit), and the surprise hedge.
#include "tests/unit/plbhac/plbhac_planner_test_util.h"

using namespace hetpu;
using namespace hetpu::plbhac_test;

TEST(PlbhacSurprise, OneSlowBlockShrinksTheNextAndANormalOneRestoresIt)
{
    // Two equal PUs. PU 0's block takes 3x its prediction (a competing process, or a
    // spike: one block cannot tell). The model holds such a point back, but the planner
    // must not hand PU 0 another full-size block: its next one is sized for the slower
    // speed. When the following block is normal again, the sizes return.
    const std::vector<double> spe{1e-4, 1e-4};
    const PlbhacOptions o = many_short_steps();
    const uint64_t total = 10'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    train_linear(p, spe, total);
    uint64_t rem = total - 40000;
    double t = 1.0;
    // A few regular steps so the models rest on enough points.
    uint64_t a = 0, b = 0;
    for (int k = 0; k < 6; ++k) {
        a = p.next_block(0, rem);
        b = p.next_block(1, rem);
        t += spe[0] * a;
        p.block_done(done(0, a, spe[0] * a, t));
        p.block_done(done(1, b, spe[1] * b, t));
        rem -= a + b;
    }
    ASSERT_NEAR(static_cast<double>(a), static_cast<double>(b), 0.02 * b);
    const uint64_t normal = a;

    a = p.next_block(0, rem);
    b = p.next_block(1, rem);
    p.block_done(done(1, b, spe[1] * b, t + spe[1] * b));
    p.block_done(done(0, a, 3.0 * spe[0] * a, t + 3.0 * spe[0] * a));  // 3x slower
    rem -= a + b;
    const uint64_t after_slow = p.next_block(0, rem);
    EXPECT_LT(after_slow, 0.6 * normal) << "sized for a PU ~3x slower, not its old speed";

    // It was a spike: that block runs at the old speed, so early for the plan that the
    // step's remaining time is filled with a gap block, after which the regular blocks have
    // their old size again.
    std::vector<PlbhacTraceRecord> trace;
    p.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
    p.block_done(done(0, after_slow, spe[0] * after_slow, t + 10));
    rem -= after_slow;
    const uint64_t b2 = p.next_block(1, rem);
    p.block_done(done(1, b2, spe[1] * b2, t + 10));
    rem -= b2;
    uint64_t restored = p.next_block(0, rem);
    p.block_done(done(0, restored, spe[0] * restored, t + 11));
    if (trace.back().phase == "gap") {
        rem -= restored;
        restored = p.next_block(0, rem);
        p.block_done(done(0, restored, spe[0] * restored, t + 12));
    }
    EXPECT_EQ(trace.back().phase, "execution");
    EXPECT_NEAR(static_cast<double>(restored), static_cast<double>(normal), 0.1 * normal);
}

TEST(PlbhacRefit, RefitsRunApartGiveTheSameRunAsRefitsInBlockDone)
{
    // The simulator refits through prepare_refit; the Spy forwards block_done alone, so
    // its planner refits inline. Noisy units, two seeds: the same blocks, the same times.
    const sim::Scenario s = three_machines();
    for (uint64_t seed : {1u, 2u}) {
        PlbhacOptions po;
        po.x_init = s.x_init;
        PlbhacPlanner apart(sim::planner_workers(s), sim::block_rules(s), po);
        PlbhacPlanner inline_(sim::planner_workers(s), sim::block_rules(s), po);
        Spy spy(inline_);
        spy.log.reserve(10000);
        const sim::SimResult a = sim::simulate(s, apart, {seed, false});
        const sim::SimResult b = sim::simulate(s, spy, {seed, false});
        EXPECT_EQ(apart.refits_applied(), a.blocks) << "every block refitted apart";
        EXPECT_EQ(inline_.refits_applied(), 0u);
        ASSERT_EQ(a.trace.size(), b.trace.size()) << "seed " << seed;
        for (size_t i = 0; i < a.trace.size(); ++i) {
            EXPECT_EQ(a.trace[i].unit, b.trace[i].unit) << i;
            EXPECT_EQ(a.trace[i].count, b.trace[i].count) << i;
            EXPECT_DOUBLE_EQ(a.trace[i].end_s, b.trace[i].end_s) << i;
        }
        EXPECT_DOUBLE_EQ(a.makespan_s, b.makespan_s);
    }
}

TEST(PlbhacRefit, AStaleOrUnrunRefitIsNotApplied)
{
    // PU 0's refit for block d1 is prepared, then another of its blocks (d2) reaches
    // block_done first: the refit was made from models that lack d2 and must not replace
    // them. Nor may a refit that was never run. Either way the planner adds the block
    // itself and ends as a planner told d2 then d1 inline. Times 8% off linear (not
    // surprises) so that models with and without d2 differ.
    const std::vector<double> spe{1e-4, 2e-4};
    const PlbhacOptions o = many_short_steps();
    const uint64_t total = 10'000'000;
    auto trained = [&] {
        auto p = std::make_unique<PlbhacPlanner>(workers(2), rules(total), o);
        train_linear(*p, spe, total);
        return p;
    };
    auto drive = [&](PlbhacPlanner &p, uint64_t rem) {  // the same steps for every planner
        std::vector<uint64_t> sizes;
        double t = 10;
        for (int k = 0; k < 6; ++k) {
            const uint64_t a = p.next_block(0, rem), b = p.next_block(1, rem);
            sizes.push_back(a);
            sizes.push_back(b);
            t += 1;
            p.block_done(done(0, a, spe[0] * a * (k % 2 ? 1.08 : 0.93), t));
            p.block_done(done(1, b, spe[1] * b, t));
            rem -= a + b;
        }
        return sizes;
    };
    const BlockDone d1 = done(0, 30000, spe[0] * 30000 * 1.08, 2.0);
    const BlockDone d2 = done(0, 90000, spe[0] * 90000 * 0.92, 3.0);
    const uint64_t rem = total - 200000;

    auto told = trained();
    told->block_done(d2);
    told->block_done(d1);
    const std::vector<uint64_t> expected = drive(*told, rem);

    auto stale = trained();
    std::unique_ptr<PuRefit> r1 = stale->prepare_refit(d1);
    ASSERT_NE(r1, nullptr);
    r1->run();
    stale->block_done(d2);
    stale->block_done_refitted(d1, r1.get());
    EXPECT_EQ(stale->refits_applied(), 0u);
    EXPECT_EQ(drive(*stale, rem), expected);

    auto unrun = trained();
    unrun->block_done(d2);
    std::unique_ptr<PuRefit> r2 = unrun->prepare_refit(d1);
    unrun->block_done_refitted(d1, r2.get());
    EXPECT_EQ(unrun->refits_applied(), 0u);
    EXPECT_EQ(drive(*unrun, rem), expected);

    // In order and run, the refit is taken, and the planner ends the same.
    auto apart = trained();
    apart->block_done(d2);
    std::unique_ptr<PuRefit> r3 = apart->prepare_refit(d1);
    r3->run();
    apart->block_done_refitted(d1, r3.get());
    EXPECT_EQ(apart->refits_applied(), 1u);
    EXPECT_EQ(drive(*apart, rem), expected);

    // The models with and without d2 differ: a stale refit taken would show.
    auto without_d2 = trained();
    without_d2->block_done(d1);
    EXPECT_NE(drive(*without_d2, rem), expected);
}
