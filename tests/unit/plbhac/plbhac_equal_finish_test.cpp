// SPDX-License-Identifier: LGPL-2.1-or-later
// The equal-finish search that replaces Ipopt for many PUs: the same optimum as the Ipopt
// NLP on random increasing curves, the flat optimum a slow empty block pins, and the whole
// PLB-HAC solve (no-gain and minimum-block passes) agreeing with the Ipopt path.
#include "sched_policies/plbhac/core/plbhac_equal_finish.h"
#include "sched_policies/plbhac/core/plbhac_makespan_nlp.h"
#include "sched_policies/plbhac/core/plbhac_solve.h"

#include "tests/unit/quadratic_time_curve.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

using hetpu::MakespanNlpResult;
using hetpu::TimeCurve;
using hetpu::TimeEval;
using hetpu::testing::Quadratic;

namespace {

// T(x) = latency + c x ln(1 + x): an n log n kernel, increasing for x > 0.
class XLog1pX : public TimeCurve {
public:
    XLog1pX(double latency, double c) : l_(latency), c_(c) {}
    TimeEval eval(double x) const override
    {
        const double l = std::log1p(x);
        return TimeEval{l_ + c_ * x * l, c_ * (l + x / (1 + x)), c_ * (1 / (1 + x) + 1 / ((1 + x) * (1 + x)))};
    }

private:
    double l_, c_;
};

struct Curves {
    std::vector<std::unique_ptr<TimeCurve>> owned;
    std::vector<const TimeCurve *> view;
    void add(TimeCurve *c)
    {
        owned.emplace_back(c);
        view.push_back(c);
    }
};

// k PUs with speeds spread 1:20, latencies up to 5 ms, a mix of curve shapes.
Curves random_node(std::size_t k, std::mt19937_64 &rng)
{
    std::uniform_real_distribution<double> u(0, 1);
    Curves c;
    for (std::size_t p = 0; p < k; ++p) {
        const double speed = 1e-6 * (1 + 19 * u(rng)), latency = 5e-3 * u(rng);
        switch (p % 3) {
        case 0: c.add(new Quadratic(latency, speed, 0)); break;
        case 1: c.add(new Quadratic(latency, speed, speed * 1e-6 * u(rng))); break;
        default: c.add(new XLog1pX(latency, speed / 10)); break;
        }
    }
    return c;
}

TEST(PlbhacEqualFinish, MatchesTheIpoptOptimumOnRandomIncreasingCurves)
{
    std::mt19937_64 rng(42);
    for (std::size_t k : {2u, 3u, 5u, 8u, 17u, 40u}) {
        for (int trial = 0; trial < 5; ++trial) {
            Curves c = random_node(k, rng);
            const double W = 1e5 * static_cast<double>(k);
            const MakespanNlpResult ipopt = hetpu::solve_makespan_nlp(c.view, W);
            const MakespanNlpResult search = hetpu::solve_makespan_equal_finish(c.view, W);
            ASSERT_TRUE(ipopt.converged) << ipopt.ipopt_status_name;
            ASSERT_TRUE(search.converged);
            EXPECT_EQ(search.ipopt_status_name, "Equal_Finish_Search");
            EXPECT_NEAR(search.makespan_s, ipopt.makespan_s, 1e-7 * ipopt.makespan_s) << "k=" << k;
            EXPECT_NEAR(std::accumulate(search.shares.begin(), search.shares.end(), 0.0), W, 1e-9 * W);
            for (std::size_t p = 0; p < k; ++p) {
                EXPECT_NEAR(search.shares[p], ipopt.shares[p], 1e-5 * W) << "k=" << k << " p=" << p;
                // Every PU with work ends at the makespan: the equal finish of system (3).
                if (search.shares[p] > 1e-6 * W) {
                    EXPECT_NEAR(c.view[p]->eval(search.shares[p]).value, search.makespan_s, 1e-8 * search.makespan_s);
                }
            }
        }
    }
}

TEST(PlbhacEqualFinish, AnEmptyBlockSlowerThanTheRestPinsTheMakespanAndGetsNothing)
{
    // Two fast PUs finish W in 0.5 s; the third costs 10 s even for an empty block. The
    // NLP's optimum is then flat at t = 10 s; the search returns it with the slow PU empty.
    Curves c;
    c.add(new Quadratic(0, 1e-6, 0));
    c.add(new Quadratic(0, 1e-6, 0));
    c.add(new Quadratic(10, 1e-6, 0));
    const double W = 1e6;
    const MakespanNlpResult r = hetpu::solve_makespan_equal_finish(c.view, W);
    ASSERT_TRUE(r.converged);
    EXPECT_NEAR(r.makespan_s, 10.0, 1e-6);
    EXPECT_LT(r.shares[2], 1e-6 * W);
    EXPECT_NEAR(r.shares[0] + r.shares[1] + r.shares[2], W, 1e-9 * W);
}

TEST(PlbhacEqualFinish, EveryPuThatStartsAfterTheOthersFinishIsFoundAtOnce)
{
    // 100 PUs of the same speed, PU p busy until 0.1 p s. With m PUs working the optimum is
    // t = (W c + 0.1 m (m - 1) / 2) / m: 0.44 s for m = 5, between the fifth's start (0.4 s)
    // and the sixth's (0.5 s), so PUs 5..99 are left empty. Listed in shuffled order: the
    // flags follow the curves' order, not their starts.
    std::vector<int> order(100);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(11));
    Curves c;
    for (int p : order)
        c.add(new Quadratic(0.1 * p, 1e-6, 0));
    const double W = 1.2e6;
    const std::vector<bool> empty = hetpu::empty_at_optimum(c.view, W);
    ASSERT_EQ(empty.size(), order.size());
    Curves working;
    for (std::size_t i = 0; i < order.size(); ++i) {
        EXPECT_EQ(empty[i], order[i] >= 5) << "PU " << order[i];
        if (!empty[i])
            working.add(new Quadratic(0.1 * order[i], 1e-6, 0));
    }
    const MakespanNlpResult r = hetpu::solve_makespan_equal_finish(working.view, W);
    ASSERT_TRUE(r.converged);
    EXPECT_NEAR(r.makespan_s, 0.44, 1e-9);

    // Nobody is left empty when every start is before the end.
    Curves even;
    for (int p = 0; p < 4; ++p)
        even.add(new Quadratic(0.01 * p, 1e-6, 0));
    for (bool e : hetpu::empty_at_optimum(even.view, W))
        EXPECT_FALSE(e);
    EXPECT_THROW(hetpu::empty_at_optimum({}, W), std::invalid_argument);
    EXPECT_THROW(hetpu::empty_at_optimum(even.view, 0), std::invalid_argument);
}

TEST(PlbhacEqualFinish, APuThatCouldTakeEverythingAloneIsBracketedToW)
{
    // One PU 1000x faster than the other: nearly all of W, and the sum still exact.
    Curves c;
    c.add(new Quadratic(0, 1e-9, 0));
    c.add(new Quadratic(0, 1e-6, 0));
    const double W = 1e6;
    const MakespanNlpResult r = hetpu::solve_makespan_equal_finish(c.view, W);
    ASSERT_TRUE(r.converged);
    const double t = W / (1e9 + 1e6);  // analytic: x_p = t / c_p, sum = W
    EXPECT_NEAR(r.makespan_s, t, 1e-9 * t);
    EXPECT_NEAR(r.shares[0], t / 1e-9, 1e-6 * W);
}

TEST(PlbhacEqualFinish, RejectsBadArguments)
{
    Curves c;
    c.add(new Quadratic(0, 1, 0));
    EXPECT_THROW(hetpu::solve_makespan_equal_finish({}, 1), std::invalid_argument);
    EXPECT_THROW(hetpu::solve_makespan_equal_finish(c.view, 0), std::invalid_argument);
    EXPECT_THROW(hetpu::solve_makespan_equal_finish(c.view, std::nan("")), std::invalid_argument);
    EXPECT_THROW(hetpu::solve_makespan_equal_finish({nullptr}, 1), std::invalid_argument);
}

// The whole solve with its no-gain and minimum-block passes: the search path gives the
// blocks the Ipopt path gives, to a granule or two of rounding.
TEST(PlbhacEqualFinish, TheWholeSolveAgreesWithTheIpoptPath)
{
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 6; ++trial) {
        Curves c = random_node(12, rng);
        std::vector<hetpu::PlbhacPu> pus;
        for (std::size_t p = 0; p < c.view.size(); ++p) {
            hetpu::PlbhacPu pu;
            pu.exec = c.view[p];
            pu.min_block = p % 4 == 0 ? 200000 : 0;  // some too large to be met: BelowMinimum
            pu.ready_s = p % 5 == 0 ? 0.05 : 0;
            pus.push_back(pu);
        }
        Curves slow;  // a PU whose empty block outlasts everything: NoGain
        slow.add(new Quadratic(100, 1e-6, 0));
        hetpu::PlbhacPu s;
        s.exec = slow.view[0];
        pus.push_back(s);

        hetpu::PlbhacSolveOptions ipopt_opt, search_opt;
        ipopt_opt.granule = search_opt.granule = 64;
        search_opt.equal_finish_from_pus = 2;
        const std::int64_t W = 1000000;
        const hetpu::PlbhacSolution a = hetpu::plbhac_solve(pus, W, ipopt_opt);
        const hetpu::PlbhacSolution b = hetpu::plbhac_solve(pus, W, search_opt);
        EXPECT_EQ(std::accumulate(b.blocks.begin(), b.blocks.end(), std::int64_t(0)), W);
        EXPECT_NEAR(b.makespan_s, a.makespan_s, 1e-4 * a.makespan_s) << "trial " << trial;
        for (std::size_t p = 0; p < pus.size(); ++p) {
            EXPECT_EQ(b.outcome[p], a.outcome[p]) << "trial " << trial << " p=" << p;
            EXPECT_NEAR(static_cast<double>(b.blocks[p]), static_cast<double>(a.blocks[p]), 3 * 64.0)
                << "trial " << trial << " p=" << p;
        }
        EXPECT_EQ(b.outcome.back(), hetpu::PlbhacOutcome::NoGain);
    }
}

TEST(PlbhacEqualFinish, ThousandsOfPusSolveToEqualFinishTimes)
{
    std::mt19937_64 rng(3);
    Curves c = random_node(4096, rng);
    const double W = 1e9;
    const MakespanNlpResult r = hetpu::solve_makespan_equal_finish(c.view, W);
    ASSERT_TRUE(r.converged);
    EXPECT_LT(r.iterations, 100);
    EXPECT_NEAR(std::accumulate(r.shares.begin(), r.shares.end(), 0.0), W, 1e-9 * W);
    for (std::size_t p = 0; p < c.view.size(); ++p) {
        if (r.shares[p] > 1e-6 * W) {
            EXPECT_NEAR(c.view[p]->eval(r.shares[p]).value, r.makespan_s, 1e-8 * r.makespan_s) << p;
        }
    }
}

}  // namespace
