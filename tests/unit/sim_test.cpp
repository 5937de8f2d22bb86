// SPDX-License-Identifier: LGPL-2.1-or-later
// The simulator behind `hetpu sim`: scenario parsing, unit timing, the exact static
// optimum (checked against brute force), and event-driven runs with known answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <random>
#include <stdexcept>
#include <thread>

#include "runtime/divisible/core/planner_extensions.h"
#include "tools/sim/optimum.h"
#include "tools/sim/scenario.h"
#include "tools/sim/simulated_unit.h"
#include "tools/sim/simulator.h"
#include "tools/sim/static_planner.h"
#include "tests/unit/thrown_message.h"

using namespace hetpu;
using namespace hetpu::sim;

namespace {

std::string expect_error(const std::string &json)
{
    try {
        parse_scenario(json);
    } catch (const ScenarioError &e) {
        return e.what();
    }
    ADD_FAILURE() << "accepted: " << json;
    return "";
}

UnitSpec linear_unit(const std::string &name, double seconds_per_element)
{
    UnitSpec u;
    u.name = name;
    u.unit_class = "cpu";
    u.profile = {{1000, 1000 * seconds_per_element}};
    return u;
}

}  // namespace

TEST(SimScenario, ParsesTheDocumentedExample)
{
    Scenario s = parse_scenario(R"({"workload": 100000, "granule": 64, "x_init": 1024,
        "units": [{"name": "A.gpu0", "profile": [[1024, 0.010], [8192, 0.045], [65536, 0.30]],
                   "transfer": [0.0005, 2.0e-7], "noise": 0.03, "slowdown": [[142.0, 2.5]]},
                  {"name": "A.cpu", "profile": [[1024, 0.05]]}]})");
    EXPECT_EQ(s.workload, 100000u);
    EXPECT_EQ(s.granule, 64u);
    EXPECT_EQ(s.x_init, 1024u);
    ASSERT_EQ(s.units.size(), 2u);
    EXPECT_EQ(s.units[0].unit_class, "gpu");
    EXPECT_EQ(s.units[1].unit_class, "cpu");
    EXPECT_DOUBLE_EQ(s.units[0].latency_s, 0.0005);
    EXPECT_DOUBLE_EQ(s.units[0].slowdown[0].second, 2.5);
}

TEST(SimScenario, RejectsBadInputNamingTheField)
{
    EXPECT_NE(expect_error("{").find("not valid JSON"), std::string::npos);
    EXPECT_NE(expect_error(R"({"units": []})").find("workload"), std::string::npos);
    EXPECT_NE(expect_error(R"({"workload": 10, "units": []})").find("units"), std::string::npos);
    EXPECT_NE(expect_error(R"({"workload": 10, "units": [{"name": "u"}]})").find("profile"), std::string::npos);
    std::string decreasing = expect_error(R"({"workload": 10, "units": [{"name": "u", "profile": [[1, 2], [2, 1]]}]})");
    EXPECT_NE(decreasing.find("must not decrease"), std::string::npos);
    EXPECT_NE(decreasing.find("(u)"), std::string::npos) << "names the unit";
    EXPECT_NE(expect_error(R"({"workload": 10, "granule": 20, "units": [{"name": "u", "profile": [[1, 1]]}]})")
                  .find("granule"),
              std::string::npos);
    EXPECT_NE(
        expect_error(R"({"workload": 10, "units": [{"name": "u", "profile": [[1, 1]], "noise": -1}]})").find("noise"),
        std::string::npos);
    EXPECT_NE(
        expect_error(R"({"workload": 10, "units": [{"name": "u", "profile": [[1, 1]], "unseen": -1}]})").find("unseen"),
        std::string::npos);
    EXPECT_NE(expect_error(R"({"workload": 10, "units": [{"name": "u", "profile": [[1, 1]], "stall": [2, 1]}]})")
                  .find("probability must be in [0, 1]"),
              std::string::npos);
    EXPECT_NE(expect_error(R"({"workload": 10, "units": [{"name": "u", "profile": [[1, 1]], "stall": 0.5}]})")
                  .find("[probability, seconds]"),
              std::string::npos);
}

TEST(SimRun, UnseenTimeAndStallsEndBlocksLaterThanThePolicyIsTold)
{
    // One unit, 0.1 s per block of 100, 0.02 s unseen, every block stalling 0.5 s; two
    // blocks handed out at 0, the third when the first ends. The first starts at 0.02 and
    // ends at 0.62; the second, queued since 0, starts then (its unseen time passed behind
    // the first) and ends at 1.22; the third, handed out at 0.62, at 1.82. The planner hears
    // exec 0.1 s and no transfer. The optimum counts the unseen time (a cost of a block on
    // an idle unit) but not the stalls.
    Scenario s = parse_scenario(R"({"workload": 300, "granule": 1,
        "units": [{"name": "a.gpu", "profile": [[100, 0.1]], "unseen": 0.02, "stall": [1, 0.5]}]})");
    EXPECT_DOUBLE_EQ(s.units[0].unseen_s, 0.02);
    EXPECT_DOUBLE_EQ(s.units[0].stall_probability, 1.0);
    struct Told final : BlockPlanner {
        std::string name() const override { return "told"; }
        bool assigns_workers() const override { return false; }
        uint64_t next_block(int, uint64_t) override { return 100; }
        void block_done(const BlockDone &d) override { done.push_back(d); }
        std::vector<BlockDone> done;
    } planner;
    SimResult r = simulate(s, planner, {3, false, false});
    EXPECT_NEAR(r.makespan_s, 1.82, 1e-9);
    ASSERT_EQ(planner.done.size(), 3u);
    const double ends[] = {0.62, 1.22, 1.82};
    for (size_t i = 0; i < planner.done.size(); ++i) {
        EXPECT_NEAR(planner.done[i].exec_s, 0.1, 1e-12);
        EXPECT_NEAR(planner.done[i].transfer_s, 0.0, 1e-12);
        EXPECT_NEAR(planner.done[i].end_s, ends[i], 1e-9);
    }
    SimulatedUnit u(s.units[0]);
    EXPECT_NEAR(u.nominal_cost(100).total(), 0.12, 1e-12);
    EXPECT_NEAR(u.nominal_cost(0).total(), 0.0, 1e-12) << "no block, no unseen time";
    s.units[0].stall_probability = 0;
    EXPECT_NEAR(simulate(s, planner, {3, false, false}).makespan_s, 0.32, 1e-9) << "0.12, 0.22, 0.32";
}

TEST(SimRun, CompletionsQueueForAPlannerBusyWithAnother)
{
    // Two units end their first 0.1 s blocks together, and the planner takes >= 50 ms per
    // completion. As under the runtime's lock (one planner for every worker), the second
    // completion waits for the first: its unit starts its next block after both callbacks,
    // so the run ends no sooner than 0.1 + d1 + d2 + 0.1 (d: each callback's own measured
    // time). Were the callbacks concurrent it would end at 0.2 + max(d1, d2) plus
    // microseconds. Uncharged, the run is the blocks alone: 0.2 s.
    Scenario s = parse_scenario(R"({"workload": 400, "granule": 1,
        "units": [{"name": "a.cpu", "profile": [[100, 0.1]]}, {"name": "b.cpu", "profile": [[100, 0.1]]}]})");
    struct Slow final : BlockPlanner {
        std::string name() const override { return "slow"; }
        bool assigns_workers() const override { return false; }
        uint64_t next_block(int, uint64_t) override { return 100; }
        void block_done(const BlockDone &) override
        {
            const auto t0 = std::chrono::steady_clock::now();
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            took.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::vector<double> took;
    } planner;
    const SimResult charged = simulate(s, planner, {1, true, false});
    ASSERT_GE(planner.took.size(), 2u);
    EXPECT_GE(charged.makespan_s, 0.2 + planner.took[0] + planner.took[1]);
    planner.took.clear();
    EXPECT_NEAR(simulate(s, planner, {1, false, false}).makespan_s, 0.2, 1e-12);
}

TEST(SimRun, RefitsRunOnTheirOwnUnitsOutsideThePlannerLock)
{
    // As the runtime does, a completion's refit (PlannerExtensions::prepare_refit) runs on its
    // unit before the lock: two units ending together refit side by side, and only then
    // does the planner hear of either block. Under the lock the order would be refit a,
    // done a, refit b, done b. Each unit still waits for its own refit (>= 50 ms) before
    // its second block, so the run ends no sooner than 0.2 s plus the shorter refit.
    Scenario s = parse_scenario(R"({"workload": 400, "granule": 1,
        "units": [{"name": "a.cpu", "profile": [[100, 0.1]]}, {"name": "b.cpu", "profile": [[100, 0.1]]}]})");
    struct SlowRefit final : PuRefit {
        explicit SlowRefit(std::vector<std::string> &calls, int unit) : calls(calls), unit(unit) {}
        void run() override
        {
            const auto t0 = std::chrono::steady_clock::now();
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            calls.push_back("refit " + std::to_string(unit));
        }
        std::vector<std::string> &calls;
        int unit;
        double took = 0;
    };
    struct Planner final : BlockPlanner, PlannerExtensions {
        PlannerExtensions *extensions() override { return this; }
        std::string name() const override { return "refits"; }
        bool assigns_workers() const override { return true; }
        uint64_t next_block(int, uint64_t) override { return 100; }
        std::unique_ptr<PuRefit> prepare_refit(const BlockDone &d) override
        {
            return std::make_unique<SlowRefit>(calls, d.worker);
        }
        void block_done(const BlockDone &d) override { calls.push_back("inline " + std::to_string(d.worker)); }
        void block_done_refitted(const BlockDone &d, PuRefit *r) override
        {
            auto *refit = dynamic_cast<SlowRefit *>(r);
            ASSERT_NE(refit, nullptr);
            EXPECT_EQ(refit->unit, d.worker);
            EXPECT_GT(refit->took, 0.0) << "run before the planner hears of the block";
            shortest = std::min(shortest, refit->took);
            calls.push_back("done " + std::to_string(d.worker));
        }
        std::vector<std::string> calls;
        double shortest = 1e9;
    } planner;
    const SimResult r = simulate(s, planner, {1, true, false});
    ASSERT_EQ(planner.calls.size(), 8u);
    EXPECT_EQ(planner.calls[0], "refit 0");
    EXPECT_EQ(planner.calls[1], "refit 1");
    EXPECT_EQ(planner.calls[2].substr(0, 5), "done ");
    EXPECT_EQ(planner.calls[3].substr(0, 5), "done ");
    EXPECT_GE(r.makespan_s, 0.2 + planner.shortest);
    // Uncharged, the refits still come first and cost nothing: the blocks alone.
    planner.calls.clear();
    EXPECT_NEAR(simulate(s, planner, {1, false, false}).makespan_s, 0.2, 1e-12);
    EXPECT_EQ(planner.calls[1], "refit 1");
}

TEST(SimUnit, InterpolatesExtrapolatesAndSlowsDown)
{
    UnitSpec spec;
    spec.name = "u";
    spec.profile = {{100, 1.0}, {200, 3.0}};
    spec.latency_s = 0.5;
    spec.per_element_s = 0.01;
    spec.slowdown = {{10.0, 2.0}};
    SimulatedUnit u(spec);
    EXPECT_DOUBLE_EQ(u.exec_time(150), 2.0);
    EXPECT_DOUBLE_EQ(u.exec_time(300), 5.0) << "last segment extended";
    // Below the first point the first segment's line (0.2 s at 60, 0 at 50) would make
    // small blocks cheaper per element than the first point, or free: it is held at
    // proportional to the first point from below and at its time from above.
    EXPECT_NEAR(u.exec_time(60), 0.6, 1e-12) << "no cheaper per element than the first point";
    EXPECT_NEAR(u.exec_time(40), 0.4, 1e-12) << "never free";
    spec.profile = {{100, 1.0}, {200, 1.2}};
    const SimulatedUnit fixed(spec);
    EXPECT_NEAR(fixed.exec_time(50), 0.9, 1e-12) << "a fixed cost extends below the first point";
    spec.profile = {{100, 1.0}, {200, 3.0}};
    EXPECT_DOUBLE_EQ(u.transfer_time(100), 1.5);
    EXPECT_DOUBLE_EQ(u.transfer_time(0), 0.0);
    std::mt19937_64 rng(1);
    EXPECT_DOUBLE_EQ(u.cost(100, 5.0, rng).total(), 2.5);
    EXPECT_DOUBLE_EQ(u.cost(100, 10.0, rng).total(), 5.0) << "slowdown from t = 10 on";
}

TEST(SimOptimum, ProportionalSplitForLinearUnits)
{
    std::vector<SimulatedUnit> units{SimulatedUnit(linear_unit("slow", 0.003)),
                                     SimulatedUnit(linear_unit("fast", 0.001))};
    StaticDistribution d = optimum_distribution(units, 4000, 1);
    ASSERT_EQ(d.blocks.size(), 2u);
    EXPECT_EQ(d.blocks[0] + d.blocks[1], 4000u);
    EXPECT_EQ(d.blocks[0], 1000u);
    EXPECT_EQ(d.blocks[1], 3000u);
    EXPECT_NEAR(d.makespan_s, 3.0, 1e-12);
}

TEST(SimOptimum, MatchesBruteForceOnRandomMonotoneUnits)
{
    std::mt19937_64 rng(42);
    for (int instance = 0; instance < 300; ++instance) {
        const uint64_t granule = 1 + rng() % 4;
        const uint64_t workload = granule * (1 + rng() % 12) + rng() % granule;
        const int nunits = 1 + static_cast<int>(rng() % 3);
        std::vector<SimulatedUnit> units;
        for (int u = 0; u < nunits; ++u) {
            UnitSpec spec;
            spec.name = "u" + std::to_string(u);
            double x = 0, t = 0;
            for (int k = 0; k < 3; ++k) {
                x += 1 + rng() % 10;
                t += 0.1 * (rng() % 10);
                spec.profile.push_back({x, t + 0.05});
            }
            spec.latency_s = 0.01 * (rng() % 3);
            units.emplace_back(spec);
        }
        StaticDistribution d = optimum_distribution(units, workload, granule);
        uint64_t sum = 0;
        int off_granule = 0;
        for (uint64_t b : d.blocks) {
            sum += b;
            off_granule += b % granule != 0;
        }
        ASSERT_EQ(sum, workload);
        ASSERT_LE(off_granule, 1) << "only the block holding the remainder breaks the granule";

        // Brute force over the same space: granule multiples, except at most one block
        // that also holds the workload's remainder.
        const uint64_t r = workload % granule;
        double best = 1e300;
        std::vector<uint64_t> x(nunits, 0);
        std::function<void(int, uint64_t, bool)> search = [&](int u, uint64_t left, bool remainder_used) {
            if (u == nunits) {
                if (left != 0)
                    return;
                double t = 0;
                for (int i = 0; i < nunits; ++i)
                    t = std::max(t, units[i].nominal_cost(x[i]).total());
                best = std::min(best, t);
                return;
            }
            for (uint64_t b = 0; b <= left; ++b) {
                const bool multiple = b % granule == 0;
                const bool remainder_block = r != 0 && b % granule == r && !remainder_used;
                if (!multiple && !remainder_block)
                    continue;
                x[u] = b;
                search(u + 1, left - b, remainder_used || (!multiple && remainder_block));
            }
        };
        search(0, workload, false);
        ASSERT_NEAR(d.makespan_s, best, 1e-9) << "instance " << instance;
    }
}

TEST(SimRun, GreedyOnIdenticalUnitsIsExactAndCoversEverything)
{
    Scenario s;
    s.workload = 1000;
    s.granule = 1;
    s.units = {linear_unit("a.cpu0", 0.001), linear_unit("a.cpu1", 0.001)};
    FixedBlockPlanner planner(100);
    SimResult r = simulate(s, planner, {7, false});
    EXPECT_EQ(r.blocks, 10u);
    EXPECT_NEAR(r.makespan_s, 0.5, 1e-12) << "5 blocks of 0.1 s per unit";
    for (const auto &u : r.units) {
        EXPECT_EQ(u.blocks, 5u);
        EXPECT_NEAR(u.idle_s, 0.0, 1e-12);
    }
    std::vector<int> coverage(s.workload, 0);
    for (const auto &b : r.trace)
        for (uint64_t i = b.offset; i < b.offset + b.count; ++i)
            ++coverage[i];
    for (int c : coverage)
        ASSERT_EQ(c, 1);
}

TEST(SimRun, GreedyLeavesTheFastUnitIdleAtTheEndOnHeterogeneousUnits)
{
    Scenario s;
    s.workload = 1000;
    s.units = {linear_unit("m.gpu", 0.0001), linear_unit("m.cpu", 0.01)};
    FixedBlockPlanner planner(250);
    SimResult r = simulate(s, planner, {1, false});
    std::vector<SimulatedUnit> units(s.units.begin(), s.units.end());
    StaticDistribution best = optimum_distribution(units, s.workload, 1);
    EXPECT_GT(r.makespan_s, 2 * best.makespan_s) << "the slow unit's one block dominates";
    EXPECT_GT(r.units[0].idle_s, 0.5 * r.makespan_s);
}

TEST(SimRun, SameSeedSameRunDifferentSeedDifferentNoise)
{
    Scenario s;
    s.workload = 5000;
    s.units = {linear_unit("x.cpu0", 0.001), linear_unit("x.cpu1", 0.002)};
    s.units[0].noise = 0.1;
    s.units[1].noise = 0.1;
    FixedBlockPlanner p1(100), p2(100), p3(100);
    SimResult a = simulate(s, p1, {3, false});
    SimResult b = simulate(s, p2, {3, false});
    SimResult c = simulate(s, p3, {4, false});
    EXPECT_DOUBLE_EQ(a.makespan_s, b.makespan_s);
    EXPECT_NE(a.makespan_s, c.makespan_s);
}

TEST(SimRun, TheOptimumRunUnderNoiseIsTheOptimumWithoutAndLaterWithIt)
{
    // `--policy optimum-noisy`: the optimum's distribution, one block per unit, through the
    // simulator. Without noise it ends exactly at the optimum; with each block's time
    // multiplied by its own N(1, 0.03) the run ends with the slowest of the units, on average
    // later than the noise-free optimum (E[max] >= max E), and it covers the whole job.
    Scenario s;
    s.workload = 64000;
    s.granule = 64;
    s.units = {linear_unit("a.cpu0", 0.001), linear_unit("a.cpu1", 0.002), linear_unit("b.cpu0", 0.0005),
               linear_unit("b.cpu1", 0.004)};
    std::vector<SimulatedUnit> units(s.units.begin(), s.units.end());
    const StaticDistribution best = optimum_distribution(units, s.workload, s.granule);
    StaticPlanner exact("optimum-noisy", best.blocks);
    const SimResult r = simulate(s, exact, {1, false});
    EXPECT_NEAR(r.makespan_s, best.makespan_s, 1e-9);
    EXPECT_EQ(r.blocks, 4u);
    EXPECT_FALSE(r.forced_remainder);

    for (auto &u : s.units)
        u.noise = 0.03;
    double sum = 0;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        StaticPlanner noisy("optimum-noisy", best.blocks);
        const SimResult n = simulate(s, noisy, {seed, false});
        uint64_t elements = 0;
        for (const auto &u : n.units)
            elements += u.elements;
        EXPECT_EQ(elements, s.workload);
        sum += n.makespan_s;
    }
    EXPECT_GT(sum / 20, 1.01 * best.makespan_s) << "four units with 3% noise: the slowest ends ~2% late";
}

// nlohmann's non-parse exceptions (out_of_range for 6e666) become ScenarioErrors, so
// `hetpu sim` reports them instead of aborting.
TEST(SimScenario, NumberOverflowIsAScenarioError)
{
    try {
        hetpu::sim::parse_scenario(R"({"workload": 6e666, "units": []})");
        FAIL() << "6e666 accepted";
    } catch (const hetpu::sim::ScenarioError &e) {
        EXPECT_NE(std::string(e.what()).find("number overflow"), std::string::npos) << e.what();
    }
    EXPECT_THROW(hetpu::sim::parse_scenario(R"({"workload": 18446744073709551616, "units": []})"),
                 hetpu::sim::ScenarioError);
}

// Any workload is searched in bounded memory: past the candidate list's bound the search
// bisects (the unbounded list once grew past 8 GB on workload 1e12, granule 1).
TEST(SimOptimum, HugeWorkloadsBisectInBoundedMemory)
{
    EXPECT_NO_THROW(hetpu::sim::check_optimum_job(2, 1000000000000ull, 1));
    EXPECT_THROW_MSG(hetpu::sim::check_optimum_job(2, 100, 0), std::invalid_argument,
                     "the optimum needs a positive granule and at least one unit");
    EXPECT_THROW_MSG(hetpu::sim::check_optimum_job(0, 100, 1), std::invalid_argument, "at least one unit");
    EXPECT_FALSE(hetpu::sim::optimum_needs_bisection(2, 20000, 16));
    EXPECT_TRUE(hetpu::sim::optimum_needs_bisection(2, 1000000000000ull, 1));
    EXPECT_TRUE(hetpu::sim::optimum_needs_bisection(3, UINT64_MAX, 1)) << "no overflow";
    std::vector<SimulatedUnit> units = {SimulatedUnit(linear_unit("a", 1e-9)), SimulatedUnit(linear_unit("b", 3e-9))};
    StaticDistribution d = optimum_distribution(units, 1000000000000ull, 1);
    ASSERT_EQ(d.blocks.size(), 2u);
    EXPECT_EQ(d.blocks[0] + d.blocks[1], 1000000000000ull);
    EXPECT_NEAR(static_cast<double>(d.blocks[0]), 7.5e11, 1e3) << "3/4 to the unit three times faster";
}

// Cluster-sized scenarios take the bisection path of optimum_distribution (the exact
// candidate list would hold units x granules makespans): 200 units x 300,001 granules.
// Half the units twice as fast as the others: the optimum gives the fast ones 2/3 of the
// work in equal shares, with no remainder.
TEST(SimOptimum, BisectionPathFindsTheOptimumOfLargeScenarios)
{
    std::vector<SimulatedUnit> units;
    for (int i = 0; i < 100; ++i) {
        units.emplace_back(linear_unit("slow" + std::to_string(i), 0.002));
        units.emplace_back(linear_unit("fast" + std::to_string(i), 0.001));
    }
    const uint64_t granule = 64, workload = 300000 * granule;  // 19.2 M elements
    StaticDistribution d = optimum_distribution(units, workload, granule);
    ASSERT_EQ(d.blocks.size(), units.size());
    uint64_t sum = 0;
    for (uint64_t b : d.blocks) {
        EXPECT_EQ(b % granule, 0u);
        sum += b;
    }
    EXPECT_EQ(sum, workload);
    // Fluid optimum: fast units 128,000 elements, slow units 64,000: 128 s. At granule
    // resolution it can only be later by less than one granule on the slowest unit.
    EXPECT_GE(d.makespan_s, 128.0 - 1e-9);
    EXPECT_LE(d.makespan_s, 128.0 + granule * 0.002);
}
