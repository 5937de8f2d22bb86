// SPDX-License-Identifier: LGPL-2.1-or-later
// PLB-HAC planner (sections 3.1-3.3 and Algorithm 1; DESIGN.md erratum for the
// training ratio) on scripted measurements: the planner is driven directly with chosen
// BlockDone timings, or through the simulator with noise-free or seeded units. No StarPU,
// no wall-clock assertions.
#include <gtest/gtest.h>

#include <gsl/gsl_cdf.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "sched_policies/hdss/core/hdss_planner.h"
#include "tests/unit/thrown_message.h"
#include "sched_policies/plbhac/core/plbhac_planner.h"
#include "tools/sim/optimum.h"
#include "tools/sim/simulated_unit.h"
#include "tools/sim/simulator.h"

using namespace hetpu;

namespace {

std::vector<PlannerWorker> workers(int n)
{
    std::vector<PlannerWorker> w;
    for (int i = 0; i < n; ++i)
        w.push_back({i, WorkerKind::Cpu, "pu" + std::to_string(i)});
    return w;
}

BlockRules rules(uint64_t total, uint64_t granule = 64)
{
    BlockRules r{total, granule, 0};
    normalize_block_rules(r);
    return r;
}

BlockDone done(int worker, uint64_t count, double seconds, double end_s = 0)
{
    return BlockDone{worker, 0, count, seconds, 0.0, end_s};
}

// Drives the training of PUs with linear times seconds_per_element[p] * x: all first blocks
// start together, completions in time order. Returns the size of each PU's second block.
std::vector<uint64_t> train_linear(PlbhacPlanner &p, const std::vector<double> &spe, uint64_t remaining)
{
    const int n = static_cast<int>(spe.size());
    std::vector<uint64_t> first(n), second(n);
    for (int w = 0; w < n; ++w)
        first[w] = p.next_block(w, remaining);
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return spe[a] < spe[b]; });
    for (int w : order) {
        p.block_done(done(w, first[w], spe[w] * first[w]));
        second[w] = p.next_block(w, remaining);
    }
    for (int w : order)
        p.block_done(done(w, second[w], spe[w] * second[w]));
    return second;
}

// Training blocks of 4096 elements, then 64 steps and no tail shrink: many regular blocks
// of one size, for tests that drive the planner block by block.
PlbhacOptions many_short_steps()
{
    PlbhacOptions o;
    o.x_init = 4096;
    o.tail_fraction = 1.0;
    o.steps = 64;
    return o;
}

// A linear simulated unit: exec = fixed + x / rate, transfer = latency + per_element * x.
sim::UnitSpec unit(const std::string &name, const std::string &cls, double rate, double fixed = 0, double latency = 0,
                   double per_element = 0, double noise = 0)
{
    sim::UnitSpec u;
    u.name = name;
    u.unit_class = cls;
    u.profile = {{1024, fixed + 1024 / rate}, {1 << 20, fixed + (1 << 20) / rate}};
    u.latency_s = latency;
    u.per_element_s = per_element;
    u.noise = noise;
    return u;
}

// A node of one H200 and 15 CPU workers, as its traces showed: CPUs A.cpu0-14 with timing
// scatter `cpu_noise`, then A.gpu0 (2% scatter, 0.2 ms and `gpu_per_element` seconds per
// element of transfer), their profiles sampled at doubling sizes from `smallest` to `largest`.
sim::Scenario fifteen_cpus_and_a_gpu(uint64_t workload, uint64_t granule, double cpu_noise, double gpu_per_element,
                                     double smallest, double largest, const std::function<double(double)> &cpu_time,
                                     const std::function<double(double)> &gpu_time)
{
    sim::Scenario s;
    s.workload = workload;
    s.granule = granule;
    for (int i = 0; i < 16; ++i) {
        const bool gpu = i == 15;
        sim::UnitSpec u;
        u.name = gpu ? "A.gpu0" : "A.cpu" + std::to_string(i);
        u.unit_class = gpu ? "gpu" : "cpu";
        u.noise = gpu ? 0.02 : cpu_noise;
        if (gpu) {
            u.latency_s = 2e-4;
            u.per_element_s = gpu_per_element;
        }
        for (double x = smallest; x <= largest; x *= 2)
            u.profile.push_back({x, gpu ? gpu_time(x) : cpu_time(x)});
        s.units.push_back(u);
    }
    return s;
}

// Forwards to the planner and remembers, for every block handed out, the planner state
// around the call; completions are matched to assignments per worker (FIFO, as the
// planner and the simulator both assume).
struct Assigned {
    int worker = -1;
    uint64_t size = 0;
    bool training_before = true;
    size_t solves_before = 0, solves_after = 0;
    unsigned solved_step_after = 0;
    std::string phase;  // from the completion record
    unsigned step = 0;
    double predicted_s = 0, measured_s = 0, start_s = 0, end_s = 0;
};

class Spy final : public BlockPlanner {
public:
    explicit Spy(PlbhacPlanner &p) : p_(p)
    {
        p_.on_trace = [this](const PlbhacTraceRecord &r) {
            auto &q = pending_[r.worker];
            ASSERT_FALSE(q.empty());
            Assigned &a = log[q.front()];
            q.erase(q.begin());
            EXPECT_EQ(a.size, r.size);
            a.phase = r.phase;
            a.step = r.step;
            a.predicted_s = r.predicted_s;
            a.measured_s = r.measured_s;
            a.end_s = r.time_s;
            a.start_s = r.time_s - r.measured_s;
            completed.push_back(&a - log.data());
        };
    }
    std::string name() const override { return p_.name(); }
    bool assigns_workers() const override { return true; }
    uint64_t next_block(int worker, uint64_t remaining) override
    {
        Assigned a;
        a.worker = worker;
        a.training_before = p_.training();
        a.solves_before = p_.solve_times_s().size();
        a.size = p_.next_block(worker, remaining);
        a.solves_after = p_.solve_times_s().size();
        a.solved_step_after = p_.solved_step();
        if (a.size) {
            // The cursor caps a block at what remains; record what will really run.
            a.size = std::min(a.size, remaining);
            pending_[worker].push_back(log.size());
            log.push_back(a);
        }
        return a.size;
    }
    void block_done(const BlockDone &d) override { p_.block_done(d); }

    std::vector<Assigned> log;      // in assignment order (reserve before the run)
    std::vector<size_t> completed;  // indices into log, in completion order

private:
    PlbhacPlanner &p_;
    std::map<int, std::vector<size_t>> pending_;
};

double mean(const std::vector<double> &v)
{
    return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Training (section 3.1 + erratum)

TEST(PlbhacTraining, FirstBlocksAreXinitThenTwoXinitTimesRatio)
{
    // Four PUs; times of the first block 1.0, 2.0, 2.5 and 10 s (PU 1 is the fastest).
    PlbhacOptions o;
    o.x_init = 4096;
    PlbhacPlanner p(workers(4), rules(10'000'000), o);
    EXPECT_EQ(p.x_init(), 4096u);
    for (int w = 0; w < 4; ++w)
        EXPECT_EQ(p.next_block(w, 10'000'000), 4096u) << "every PU first gets x_init";
    for (int w = 0; w < 4; ++w)
        EXPECT_EQ(p.next_block(w, 10'000'000), 0u) << "one training block at a time";
    EXPECT_TRUE(p.training());

    p.block_done(done(1, 4096, 1.0));
    EXPECT_EQ(p.next_block(1, 10'000'000), 8192u) << "first to finish: 2 x_init";
    p.block_done(done(0, 4096, 2.0));
    EXPECT_EQ(p.next_block(0, 10'000'000), 4096u) << "R = 1/2: 2 x_init R";
    p.block_done(done(2, 4096, 2.5));
    // R = 0.4: 2 * 4096 * 0.4 = 3276.8, rounded down to the granule (64): 3264.
    EXPECT_EQ(p.next_block(2, 10'000'000), 3264u);
    p.block_done(done(3, 4096, 10.0));
    // R = 0.1: 819.2 elements, rounded down to the granule.
    EXPECT_EQ(p.next_block(3, 10'000'000), 768u);
    EXPECT_TRUE(p.training());
}

TEST(PlbhacTraining, AnAcceleratorsSecondBlockIsNotLatencyOnly)
{
    PlbhacOptions o;
    o.x_init = 4096;
    std::vector<PlannerWorker> w = workers(2);
    w[1].kind = WorkerKind::OpenCL;
    PlbhacPlanner p(w, rules(10'000'000), o);
    ASSERT_EQ(p.next_block(0, 10'000'000), 4096u);
    ASSERT_EQ(p.next_block(1, 10'000'000), 4096u);
    p.block_done(done(0, 4096, 1.0));
    p.block_done(done(1, 4096, 10.0));
    // R = 0.1 would give 768 elements; an accelerator gets at least x_init / 2.
    EXPECT_EQ(p.next_block(1, 10'000'000), 2048u);
}

// Two training sizes within 1.5x of each other show no slope, and the PU's model stays
// proportional through them: an accelerator whose paper size 2 x_init R would fall there
// gets 2 x_init, a CPU keeps the paper's size, and an accelerator already 1.5x away keeps it.
TEST(PlbhacTraining, AnAcceleratorsSecondBlockShowsASlope)
{
    PlbhacOptions o;
    o.x_init = 4096;
    std::vector<PlannerWorker> w = workers(4);
    w[1].kind = WorkerKind::OpenCL;
    w[2].kind = WorkerKind::Cuda;
    PlbhacPlanner p(w, rules(10'000'000), o);
    for (int i = 0; i < 4; ++i)
        ASSERT_EQ(p.next_block(i, 10'000'000), 4096u);
    p.block_done(done(0, 4096, 1.0));
    ASSERT_EQ(p.next_block(0, 10'000'000), 8192u);  // the first to finish: 2 x_init
    p.block_done(done(1, 4096, 1.6));
    // R = 0.625: the paper's 5120 elements are within 1.5x of 4096.
    EXPECT_EQ(p.next_block(1, 10'000'000), 8192u);
    p.block_done(done(2, 4096, 3.2));
    // R = 0.3125: 2560 elements, 1.6x below x_init, already show a slope.
    EXPECT_EQ(p.next_block(2, 10'000'000), 2560u);
    p.block_done(done(3, 4096, 1.6));
    EXPECT_EQ(p.next_block(3, 10'000'000), 5120u) << "a CPU follows the paper";
}

TEST(PlbhacTraining, TheOneSynchronisationAndNoIdlenessMeanwhile)
{
    PlbhacOptions o;
    o.x_init = 4096;
    o.trust = 0;  // the paper's step sizes: the trust region (PlbhacTrust) would cap them here
    PlbhacPlanner p(workers(2), rules(10'000'000), o);
    std::vector<PlbhacTraceRecord> trace;
    p.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
    const uint64_t rem = 10'000'000;
    ASSERT_EQ(p.next_block(0, rem), 4096u);
    ASSERT_EQ(p.next_block(1, rem), 4096u);
    p.block_done(done(0, 4096, 0.1));
    ASSERT_EQ(p.next_block(0, rem), 8192u);
    p.block_done(done(1, 4096, 0.4));
    ASSERT_EQ(p.next_block(1, rem), 2048u);  // R = 0.25 -> 2048 (= the x_init / 2 floor)
    p.block_done(done(0, 8192, 0.2));
    // PU 0 finished its training, PU 1 has not: no execution block yet, but PU 0 keeps
    // working, on blocks twice as large each time (up to a quarter of an even share).
    EXPECT_TRUE(p.training());
    uint64_t waiting = 8192;
    for (int i = 0; i < 3; ++i) {
        waiting *= 2;
        EXPECT_EQ(p.next_block(0, rem), waiting);
        p.block_done(done(0, waiting, 0.2 * waiting / 8192));
        EXPECT_TRUE(p.training());
        EXPECT_EQ(p.solved_step(), 0u);
        EXPECT_TRUE(p.solve_times_s().empty()) << "no model solve before the synchronisation";
    }
    EXPECT_EQ(p.next_block(0, rem), 2 * waiting);  // still in flight when training ends
    p.block_done(done(1, 2048, 0.2));
    EXPECT_FALSE(p.training()) << "every PU finished both training blocks";
    for (const auto &r : trace) {
        EXPECT_EQ(r.phase, "training");
        EXPECT_EQ(r.step, 0u);
    }
    const uint64_t b1 = p.next_block(1, rem);
    EXPECT_GT(b1, 0u);
    EXPECT_EQ(p.solved_step(), 1u);
    EXPECT_EQ(p.solve_times_s().size(), 1u);
    p.block_done(done(0, 2 * waiting, 0.4 * waiting / 8192));  // the block PU 0 had in flight is still "training"
    EXPECT_EQ(trace.back().phase, "training");
    p.block_done(done(1, b1, 1e-4 * b1));
    EXPECT_EQ(trace.back().phase, "execution");
    EXPECT_EQ(trace.back().step, 1u);
}

TEST(PlbhacTraining, NoExecutionBlockBeforeEveryPuTrainedInSimulation)
{
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.x_init = 4096;
    s.units = {unit("a.gpu0", "gpu", 400e3, 0.002, 0.001, 1e-8, 0.02), unit("a.cpu", "cpu", 40e3, 0, 0, 0, 0.02),
               unit("b.cpu", "cpu", 10e3, 0, 0, 0, 0.02)};
    PlbhacOptions o;
    o.x_init = s.x_init;
    PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
    Spy spy(p);
    spy.log.reserve(10000);
    sim::simulate(s, spy, {3, false});
    std::map<int, int> training_done;
    double training_end = 0;
    for (size_t i : spy.completed) {
        const Assigned &a = spy.log[i];
        if (a.phase == "training") {
            ++training_done[a.worker];
            continue;
        }
        for (int w = 0; w < 3; ++w)
            ASSERT_GE(training_done[w], 2) << "an execution block completed before PU " << w << " finished training";
        if (training_end == 0)
            training_end = a.start_s;
    }
    // A block handed out while training was still on is a training block, and the
    // fastest PU did more than its two training blocks while waiting (no idleness).
    for (const Assigned &a : spy.log) {
        if (a.training_before) {
            EXPECT_EQ(a.phase, "training");
        }
    }
    EXPECT_GT(training_done[0], 2);
    EXPECT_EQ(training_done[2], 2);
}

// ---------------------------------------------------------------------------------------
// Block-size selection (section 3.2)

TEST(PlbhacSolve, FirstSolveEqualisesPredictedFinishTimes)
{
    // PU 0 four times slower than PU 1, linear times.
    const std::vector<double> spe{4e-5, 1e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.trust = 0;  // the paper's step sizes: the trust region (PlbhacTrust) would cap them here
    o.steps = 8;
    const uint64_t total = 4'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    std::vector<PlbhacTraceRecord> trace;
    p.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
    train_linear(p, spe, total);
    ASSERT_FALSE(p.training());
    const uint64_t rem = total - 20000;
    const uint64_t b0 = p.next_block(0, rem), b1 = p.next_block(1, rem);
    EXPECT_EQ(p.solve_times_s().size(), 1u);
    EXPECT_EQ(p.solve_failures(), 0u);
    ASSERT_GT(b0, 0u);
    EXPECT_NEAR(static_cast<double>(b1) / b0, 4.0, 0.4) << b0 << " vs " << b1;
    EXPECT_EQ(b0, p.current_block(0));
    EXPECT_EQ(b1, p.current_block(1));
    EXPECT_EQ(b0 % 64 + b1 % 64, 0u) << "granule multiples";
    // The step's workload is split: sum about the post-training data / steps (8).
    EXPECT_NEAR(static_cast<double>(b0 + b1), static_cast<double>(rem) / 8, 0.05 * rem / 8);
    // Predicted finish times equal.
    p.block_done(done(0, b0, spe[0] * b0));
    p.block_done(done(1, b1, spe[1] * b1));
    ASSERT_EQ(trace.size(), 6u);
    EXPECT_NEAR(trace[4].predicted_s, trace[5].predicted_s, 0.02 * trace[5].predicted_s);
    EXPECT_NEAR(trace[4].predicted_s, spe[0] * b0, 0.02 * spe[0] * b0) << "the linear model is exact";
}

TEST(PlbhacSolve, CloseTrainingSizesDoNotGiveANoiseSlope)
{
    // PU 1 is about half as fast as PU 0, so its two training blocks have nearly the same
    // size (4096 and 4160), and it is the last to finish training, so it took no waiting
    // blocks of other sizes. With timing noise, a line through two points 64 elements
    // apart has a slope made of noise (here a tenth of the true one) and would hand PU 1
    // most of the step. Taken as proportional instead, PU 1 gets about a third.
    PlbhacOptions o;
    o.x_init = 4096;
    const uint64_t total = 4'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    for (int w = 0; w < 2; ++w)
        ASSERT_EQ(p.next_block(w, total), 4096u);
    p.block_done(done(0, 4096, 0.1016));
    ASSERT_EQ(p.next_block(0, total), 8192u);
    p.block_done(done(1, 4096, 0.2));
    ASSERT_EQ(p.next_block(1, total), 4160u);  // R = 0.508
    p.block_done(done(0, 8192, 0.2032));
    ASSERT_EQ(p.next_block(0, total), 16384u);  // waiting for PU 1
    p.block_done(done(1, 4160, 0.2005));        // true time 0.2031: 1.3% noise
    ASSERT_FALSE(p.training());
    p.block_done(done(0, 16384, 0.4064));  // PU 0's next block waits for this one (PlbhacRamp)
    const uint64_t b0 = p.next_block(0, total), b1 = p.next_block(1, total);
    const double share1 = static_cast<double>(b1) / (b0 + b1);
    EXPECT_GT(share1, 0.25) << b0 << " / " << b1;
    EXPECT_LT(share1, 0.42) << b0 << " / " << b1;
}

// ---------------------------------------------------------------------------------------
// Left-out PUs keep being measured

TEST(PlbhacProbe, ALeftOutPuGetsOneMinimumBlockPerStepWhileIdle)
{
    // PU 1 pays an 8 s latency per block (plus 1e-5 s per element): more than PU 0 needs
    // for a whole step, so the solve leaves it out. It still gets one minimum block per
    // virtual step, so that a wrong model can be corrected.
    PlbhacOptions o;
    o.x_init = 4096;
    o.gap_threshold_s = 1e9;
    const uint64_t total = 4'000'000;
    BlockRules r = rules(total);
    std::vector<PlannerWorker> w = workers(2);
    w[1].kind = WorkerKind::Cuda;  // latency-bound: its second training block is x_init / 2
    PlbhacPlanner p(w, r, o);
    std::vector<PlbhacTraceRecord> trace;
    p.on_trace = [&](const PlbhacTraceRecord &t) { trace.push_back(t); };
    p.next_block(0, total);
    p.next_block(1, total);
    p.block_done(done(0, 4096, 0.04));
    const uint64_t s0 = p.next_block(0, total);
    p.block_done(done(1, 4096, 8.0 + 1e-5 * 4096));
    const uint64_t s1 = p.next_block(1, total);
    EXPECT_EQ(s1, 2048u);
    p.block_done(done(0, s0, 1e-5 * s0));
    p.block_done(done(1, s1, 8.0 + 1e-5 * s1));
    ASSERT_FALSE(p.training());
    const uint64_t a1 = p.next_block(0, total);
    ASSERT_GT(a1, 0u);
    EXPECT_EQ(p.current_block(1), 0u) << "left out by the solve";
    const uint64_t probe = p.next_block(1, total);
    EXPECT_EQ(probe, r.min_block) << "idle and left out: a minimum block";
    EXPECT_EQ(p.next_block(1, total), 0u) << "one at a time";
    p.block_done(done(1, probe, 8.0));
    EXPECT_EQ(trace.back().phase, "probe");
    EXPECT_EQ(p.next_block(1, total), 0u) << "one per step";
    p.block_done(done(0, a1, 1e-5 * a1));
    p.next_block(0, total);  // PU 0 enters step 2
    p.next_block(0, total);  // and 3, after a measurement
    EXPECT_EQ(p.next_block(1, total), r.min_block) << "a new step: another probe";
}

// ---------------------------------------------------------------------------------------
// Virtual steps (section 3.3, Algorithm 1: firstProcessVirtualStep)

TEST(PlbhacSteps, OnlyTheFirstPuToEnterAStepSolvesAndOnlyWithNewMeasurements)
{
    const std::vector<double> spe{2e-5, 1e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.trust = 0;  // the paper's step sizes: the trust region (PlbhacTrust) would cap them here
    o.gap_threshold_s = 1e9;
    const uint64_t total = 4'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    train_linear(p, spe, total);
    const uint64_t rem = total - 20000;

    // PU 1 enters step 1: the first solve.
    const uint64_t a1 = p.next_block(1, rem);
    EXPECT_EQ(p.solve_times_s().size(), 1u);
    EXPECT_EQ(p.solved_step(), 1u);
    // PU 1 at once asks for the block queued behind (its step 2): nothing was measured
    // since, so no solve, same size; the step still counts as entered.
    const uint64_t a2 = p.next_block(1, rem);
    EXPECT_EQ(a2, a1);
    EXPECT_EQ(p.solve_times_s().size(), 1u) << "nothing new measured: no re-solve";
    EXPECT_EQ(p.solved_step(), 2u);
    // PU 0 enters step 1: not the first, no solve.
    const uint64_t b1 = p.next_block(0, rem);
    EXPECT_EQ(p.solve_times_s().size(), 1u);
    // PU 1 finishes its step-1 block (a new measurement), then PU 0 enters step 2: PU 1
    // entered step 2 first, so PU 0 uses the latest solution without solving.
    p.block_done(done(1, a1, spe[1] * a1 * 1.05));
    const uint64_t b2 = p.next_block(0, rem);
    EXPECT_EQ(b2, b1);
    EXPECT_EQ(p.solve_times_s().size(), 1u) << "only the first PU to enter a step solves";
    EXPECT_EQ(p.solved_step(), 2u);
    // PU 1 enters step 3 first, with a new measurement: solve.
    const uint64_t a3 = p.next_block(1, rem);
    EXPECT_GT(a3, 0u);
    EXPECT_EQ(p.solve_times_s().size(), 2u);
    EXPECT_EQ(p.solved_step(), 3u);
    // PU 0 completes and enters step 3: no solve.
    p.block_done(done(0, b1, spe[0] * b1));
    p.next_block(0, rem);
    EXPECT_EQ(p.solve_times_s().size(), 2u);
    EXPECT_EQ(p.solved_step(), 3u);
}

TEST(PlbhacSteps, SolvedOncePerStepInSimulation)
{
    sim::Scenario s;
    s.workload = 3'000'000;
    s.granule = 64;
    s.x_init = 4096;
    s.units = {unit("a.gpu0", "gpu", 400e3, 0.002, 0.001, 1e-8, 0.02), unit("a.cpu", "cpu", 100e3, 0, 0, 0, 0.02),
               unit("b.cpu", "cpu", 50e3, 0, 0, 0, 0.02)};
    PlbhacOptions o;
    o.x_init = s.x_init;
    o.gap_threshold_s = 1e9;
    o.tail_fraction = 1.0;
    PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
    Spy spy(p);
    spy.log.reserve(10000);
    sim::simulate(s, spy, {5, false});
    unsigned highest = 0, regular = 0;
    for (const Assigned &a : spy.log) {
        if (a.phase != "execution")
            continue;
        ++regular;
        const bool first_of_step = a.step > highest;
        if (first_of_step) {
            EXPECT_EQ(a.step, highest + 1) << "steps are entered in order";
            EXPECT_EQ(a.solved_step_after, a.step) << "entering a step marks it solved";
            highest = a.step;
        } else {
            EXPECT_EQ(a.solves_after, a.solves_before)
                << "PU " << a.worker << " solved step " << a.step << " though it was not the first to enter it";
        }
    }
    EXPECT_EQ(p.solved_step(), highest);
    EXPECT_GE(highest, 6u);
    EXPECT_LE(p.solve_times_s().size(), highest);
    EXPECT_GE(regular, 2 * p.solve_times_s().size()) << "a solve per step, not per block";
}

// ---------------------------------------------------------------------------------------
// Gap filling (section 3.3, Algorithm 1: finishTime vs gapThreshold)

TEST(PlbhacGap, EarlyFinishBeyondThresholdGetsAGapBlockThatFillsIt)
{
    const std::vector<double> spe{1e-4, 2.5e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.trust = 0;  // the paper's step sizes: the trust region (PlbhacTrust) would cap them here
    const uint64_t total = 1'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    std::vector<PlbhacTraceRecord> trace;
    p.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
    train_linear(p, spe, total);
    const uint64_t rem = total - 20000;

    // Step 1 on PU 0, 0.3 s earlier than the exact linear model predicts: below the
    // 400 ms threshold, no gap block.
    const uint64_t a1 = p.next_block(0, rem);
    ASSERT_GT(spe[0] * a1, 1.0) << "blocks of seconds";
    p.block_done(done(0, a1, spe[0] * a1 - 0.3));
    ASSERT_EQ(trace.back().phase, "execution");
    EXPECT_NEAR(trace.back().predicted_s - trace.back().measured_s, 0.3, 0.05);
    const uint64_t a2 = p.next_block(0, rem);
    p.block_done(done(0, a2, spe[0] * a2));
    EXPECT_EQ(trace.back().phase, "execution") << "a gap below the threshold is not filled";
    EXPECT_EQ(trace.back().step, 2u);

    // Step 3 finishes in half the time: the next block fills the gap.
    const uint64_t a3 = p.next_block(0, rem);
    const double a3_end = 0.5 * spe[0] * a3;  // its blocks start when handed out, at 0
    p.block_done(done(0, a3, 0.5 * spe[0] * a3, a3_end));
    ASSERT_EQ(trace.back().phase, "execution");
    const double gap = trace.back().predicted_s - trace.back().measured_s;
    ASSERT_GT(gap, 0.4);
    const uint64_t g = p.next_block(0, rem);
    ASSERT_GT(g, 0u);
    EXPECT_LT(g, a3);
    p.block_done(done(0, g, spe[0] * g, a3_end + spe[0] * g));
    EXPECT_EQ(trace.back().phase, "gap");
    EXPECT_EQ(trace.back().size, g);
    // Sized so the model predicts it fills the gap (the largest granule multiple within).
    EXPECT_LE(trace.back().predicted_s, gap + 1e-9);
    EXPECT_GE(trace.back().predicted_s, 0.95 * gap);
    // Then back to regular blocks.
    const uint64_t a4 = p.next_block(0, rem);
    p.block_done(done(0, a4, spe[0] * a4));
    EXPECT_EQ(trace.back().phase, "execution");
}

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

TEST(PlbhacMemory, TheNextJobOfTheSameNameStartsTrained)
{
    // An iterative app runs one job per iteration. The first planner trains and hands its
    // models on when destroyed; the second starts in the execution phase, its first
    // blocks already split in the ratio of the PUs' speeds (4:1), with no training block.
    const std::vector<double> spe{1e-4, 2.5e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.memory = std::make_shared<PlbhacMemory>();
    const uint64_t total = 1'000'000;
    {
        PlbhacPlanner first(workers(2), rules(total), o);
        EXPECT_FALSE(first.warm_started());
        train_linear(first, spe, total);
        const uint64_t a = first.next_block(0, total - 20000);
        first.block_done(done(0, a, spe[0] * a, spe[0] * a));
    }
    ASSERT_EQ(o.memory->pus.size(), 2u);

    PlbhacPlanner second(workers(2), rules(total), o);
    EXPECT_TRUE(second.warm_started());
    EXPECT_FALSE(second.training());
    std::vector<PlbhacTraceRecord> trace;
    second.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
    const uint64_t b0 = second.next_block(0, total);
    const uint64_t b1 = second.next_block(1, total);
    EXPECT_NEAR(static_cast<double>(b1) / b0, 4.0, 0.1) << "sized by the models, not x_init";
    second.block_done(done(0, b0, spe[0] * b0, spe[0] * b0));
    EXPECT_EQ(trace.back().phase, "execution");

    // A planner for another worker set cannot use them: it trains.
    PlbhacPlanner other(workers(3), rules(total), o);
    EXPECT_FALSE(other.warm_started());
    EXPECT_EQ(other.next_block(2, total), 4096u);
}

TEST(PlbhacGap, ThresholdIsAnOption)
{
    const std::vector<double> spe{1e-4, 2.5e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.gap_threshold_s = 0.1;
    const uint64_t total = 1'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    std::vector<PlbhacTraceRecord> trace;
    p.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
    train_linear(p, spe, total);
    const uint64_t a1 = p.next_block(0, total / 2);
    p.block_done(done(0, a1, spe[0] * a1 - 0.3));
    const uint64_t g = p.next_block(0, total / 2);
    p.block_done(done(0, g, spe[0] * g));
    EXPECT_EQ(trace.back().phase, "gap") << "0.3 s early is a gap with a 100 ms threshold";
}

// ---------------------------------------------------------------------------------------
// Tail (section 3.3: blocks decrease by alpha after 70% of the data)

TEST(PlbhacFinal, EachPuTakesItsFinalShareOnceAndAllFinishTogether)
{
    // The final solve shares out everything left, each share sized to end with the others
    // after the PU's queue. PUs run two blocks ahead, so a PU a step behind reaches that
    // solution from an earlier step; it once took its share there and again at the final
    // step, and with 4 steps the run ended 9 s after the others (seen in simulation).
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.x_init = 16384;
    s.units = {unit("a.gpu0", "gpu", 100e3, 0.05, 0.005, 5e-7, 0.02),
               unit("b.gpu0", "gpu", 80e3, 0.1, 0.005, 6e-7, 0.02),
               unit("c.gpu0", "gpu", 150e3, 0.03, 0.005, 3e-7, 0.02),
               unit("a.cpu", "cpu", 10e3, 0, 0, 0, 0.03),
               unit("b.cpu", "cpu", 12e3, 0, 0, 0, 0.03),
               unit("c.cpu", "cpu", 8e3, 0, 0, 0, 0.03)};
    for (unsigned seed = 1; seed <= 8; ++seed) {
        PlbhacOptions o;
        o.x_init = s.x_init;
        o.steps = 4;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        Spy spy(p);
        spy.log.reserve(10000);
        const sim::SimResult r = sim::simulate(s, spy, {seed, false});
        unsigned final_step = 0;
        for (const Assigned &a : spy.log)
            final_step = std::max(final_step, a.step);
        std::map<int, int> final_blocks;
        std::map<int, double> last_end;
        uint64_t total = 0;
        for (const Assigned &a : spy.log) {
            total += a.size;
            last_end[a.worker] = std::max(last_end[a.worker], a.end_s);
            if (a.step == final_step && a.phase != "training")
                ++final_blocks[a.worker];
        }
        EXPECT_EQ(total, s.workload);
        for (const auto &[w, n] : final_blocks)
            EXPECT_LE(n, 1) << "seed " << seed << ": PU " << w << " took the final share " << n << " times";
        double first_idle = r.makespan_s;
        for (const auto &[w, end] : last_end)
            first_idle = std::min(first_idle, end);
        EXPECT_LT(r.makespan_s - first_idle, 0.08 * r.makespan_s) << "seed " << seed << ": PUs must finish together";
    }
}

TEST(PlbhacTail, StepSizesShrinkByOneMinusAlpha)
{
    sim::Scenario s;
    s.workload = 4'000'000;
    s.granule = 16;
    s.x_init = 4096;
    s.units = {unit("a.cpu0", "cpu", 100e3), unit("a.cpu1", "cpu", 50e3)};
    PlbhacOptions o;
    o.x_init = s.x_init;
    o.gap_threshold_s = 1e9;
    o.steps = 20;
    o.alpha = 0.1;  // tail_fraction: the default 0.7
    // Re-shares of the final step are numbered as steps of their own after it (see
    // EachShareIsResizedWithWhatWasMeasuredBeforeItIsTaken); this test reads the tail's steps
    // up to the final one, so it leaves them out.
    o.reshare_final = false;
    PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
    Spy spy(p);
    spy.log.reserve(10000);
    sim::simulate(s, spy, {1, false});

    for (int w = 0; w < 2; ++w) {
        std::map<unsigned, uint64_t> by_step;
        std::map<unsigned, std::string> phase;
        uint64_t assigned_before_tail = 0;
        for (const Assigned &a : spy.log) {
            if (a.worker == w && (a.phase == "execution" || a.phase == "tail")) {
                by_step[a.step] = a.size;
                phase[a.step] = a.phase;
            }
        }
        unsigned first_tail = 0;
        for (auto &[step, ph] : phase)
            if (ph == "tail" && !first_tail)
                first_tail = step;
        for (const Assigned &a : spy.log)
            if (a.phase != "tail")
                assigned_before_tail += a.size;
        ASSERT_GT(first_tail, 1u) << "PU " << w;
        EXPECT_GE(assigned_before_tail, 0.7 * s.workload * 0.95) << "tail only after 70% of the data";
        const unsigned last = by_step.rbegin()->first;
        int checked = 0;
        // From the last full step before the tail to the one before the last (the last
        // takes the remainder): each step is (1 - alpha) times the previous.
        for (unsigned k = first_tail; k + 1 < last; ++k) {
            ASSERT_TRUE(by_step.count(k - 1) && by_step.count(k));
            EXPECT_EQ(phase[k], "tail");
            double ratio = static_cast<double>(by_step[k]) / by_step[k - 1];
            EXPECT_NEAR(ratio, 0.9, 0.02) << "PU " << w << " step " << k;
            ++checked;
        }
        EXPECT_GE(checked, 4) << "PU " << w;
    }
}

// ---------------------------------------------------------------------------------------
// Options from the environment

TEST(PlbhacOptions, ParsesValidValues)
{
    std::map<std::string, std::string> env{{"HETPU_PLBHAC_GAP_MS", "250"}, {"HETPU_PLBHAC_TAIL", "0.6"},
                                           {"HETPU_PLBHAC_ALPHA", "0.2"},  {"HETPU_PLBHAC_STEPS", "12"},
                                           {"HETPU_PLBHAC_XINIT", "2048"}, {"HETPU_PLBHAC_HEDGE", "0"}};
    auto lookup = [&](const char *n) -> const char * {
        auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    PlbhacOptions o;
    EXPECT_NO_THROW(plbhac_options_from_env(o, lookup));
    EXPECT_DOUBLE_EQ(o.gap_threshold_s, 0.25);
    EXPECT_DOUBLE_EQ(o.tail_fraction, 0.6);
    EXPECT_DOUBLE_EQ(o.alpha, 0.2);
    EXPECT_EQ(o.steps, 12u);
    EXPECT_EQ(o.x_init, 2048u);
    EXPECT_FALSE(o.hedge_straggle);

    // Unset or empty: defaults kept (the paper's 400 ms, 70%, 0.1).
    PlbhacOptions d;
    EXPECT_NO_THROW(plbhac_options_from_env(d, [](const char *) -> const char * { return nullptr; }));
    EXPECT_DOUBLE_EQ(d.gap_threshold_s, 0.4);
    EXPECT_DOUBLE_EQ(d.tail_fraction, 0.7);
    EXPECT_DOUBLE_EQ(d.alpha, 0.1);
    EXPECT_EQ(d.steps, 8u);
    EXPECT_TRUE(d.hedge_straggle);
    EXPECT_NO_THROW(plbhac_options_from_env(d, [](const char *) -> const char * { return ""; }));
    EXPECT_DOUBLE_EQ(d.gap_threshold_s, 0.4);
    // Boundaries accepted.
    env = {{"HETPU_PLBHAC_GAP_MS", "0"},
           {"HETPU_PLBHAC_TAIL", "1"},
           {"HETPU_PLBHAC_ALPHA", "0"},
           {"HETPU_PLBHAC_STEPS", "1"}};
    EXPECT_NO_THROW(plbhac_options_from_env(o, lookup));
    EXPECT_DOUBLE_EQ(o.gap_threshold_s, 0.0);
    EXPECT_EQ(o.steps, 1u);
}

TEST(PlbhacOptions, RejectsEachBadValueNamingTheVariable)
{
    const std::vector<std::pair<std::string, std::vector<std::string>>> bad{
        {"HETPU_PLBHAC_GAP_MS", {"abc", "-1", "12ms", "nan", "inf"}},
        {"HETPU_PLBHAC_TAIL", {"x", "-0.1", "1.5", "70%"}},
        {"HETPU_PLBHAC_ALPHA", {"-0.1", "1", "0.1.2"}},
        {"HETPU_PLBHAC_STEPS", {"0", "2.5", "-3", "eight"}},
        {"HETPU_PLBHAC_XINIT", {"1.5", "-1", "1k"}},
        {"HETPU_PLBHAC_STEP_ERROR", {"-0.1", "x"}},
        {"HETPU_PLBHAC_MIN_STEPS", {"0", "2.5"}},
        {"HETPU_PLBHAC_HEDGE", {"2", "on", "0.5"}},
    };
    for (const auto &[var, values] : bad) {
        for (const auto &v : values) {
            PlbhacOptions o;
            o.x_init = 777;
            auto lookup = [&, var = var, v = v](const char *n) -> const char * {
                if (var == n)
                    return v.c_str();
                if (std::string(n) == "HETPU_PLBHAC_TAIL")
                    return "0.5";  // a valid value read before some bad ones
                return nullptr;
            };
            EXPECT_THROW_MSG(plbhac_options_from_env(o, lookup), PlbhacInputError, var + " must be ") << "=" << v;
            // On an error the options are left as they were.
            EXPECT_DOUBLE_EQ(o.tail_fraction, 0.7) << var << "=" << v;
            EXPECT_EQ(o.x_init, 777u);
        }
    }
}

// ---------------------------------------------------------------------------------------
// In simulation: the paper's multi-machine comparison and adaptability

namespace {

// Three machines, a CPU and a GPU each, different speeds; GPUs pay a per-block launch
// cost and a transfer, so tiny fixed blocks (greedy) waste time. About 13 s optimum.
sim::Scenario three_machines(uint64_t workload = 6'000'000)
{
    sim::Scenario s;
    s.workload = workload;
    s.granule = 64;
    s.x_init = 8192;
    s.units = {unit("A.gpu0", "gpu", 200e3, 0.02, 0.005, 2e-8, 0.02), unit("A.cpu", "cpu", 30e3, 0.001, 0, 0, 0.02),
               unit("B.gpu0", "gpu", 120e3, 0.02, 0.005, 2e-8, 0.02), unit("B.cpu", "cpu", 20e3, 0.001, 0, 0, 0.02),
               unit("C.gpu0", "gpu", 80e3, 0.02, 0.005, 2e-8, 0.02),  unit("C.cpu", "cpu", 10e3, 0.001, 0, 0, 0.02)};
    return s;
}

}  // namespace

TEST(PlbhacSim, NearOptimumAndBetterThanGreedyAndHdss)
{
    const sim::Scenario s = three_machines();
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const double optimum = sim::optimum_distribution(units, s.workload, s.granule).makespan_s;
    ASSERT_GT(optimum, 10.0);
    ASSERT_LT(optimum, 20.0);
    for (uint64_t seed : {1u, 2u}) {
        PlbhacOptions po;
        po.x_init = s.x_init;
        PlbhacPlanner plb(sim::planner_workers(s), sim::block_rules(s), po);
        const sim::SimResult rp = sim::simulate(s, plb, {seed, false});
        FixedBlockPlanner greedy(s.x_init);
        const sim::SimResult rg = sim::simulate(s, greedy, {seed, false});
        HdssOptions ho;
        ho.x_init = s.x_init;
        HdssPlanner hdss(sim::planner_workers(s), sim::block_rules(s), ho);
        const sim::SimResult rh = sim::simulate(s, hdss, {seed, false});
        RecordProperty("seed" + std::to_string(seed) + "_plbhac_over_optimum", std::to_string(rp.makespan_s / optimum));
        std::printf("[ sim      ] seed %u: optimum %.3f s, plb-hac %.3f s (x%.3f, %u blocks, %zu solves), "
                    "greedy %.3f s (x%.3f), hdss %.3f s (x%.3f)\n",
                    static_cast<unsigned>(seed), optimum, rp.makespan_s, rp.makespan_s / optimum, rp.blocks,
                    plb.solve_times_s().size(), rg.makespan_s, rg.makespan_s / optimum, rh.makespan_s,
                    rh.makespan_s / optimum);
        EXPECT_FALSE(rp.forced_remainder);
        EXPECT_LE(rp.makespan_s, 1.10 * optimum) << "seed " << seed;
        EXPECT_LT(rp.makespan_s, rg.makespan_s) << "seed " << seed;
        EXPECT_LT(rp.makespan_s, rh.makespan_s) << "seed " << seed;
    }
}

// Forwards to a planner, but reports each block of a worker without `hidden` seconds of
// its transfer: a per-block latency that StarPU's profiling does not see (task dispatch,
// an accelerator driver's completion polling), while the block's end time includes it.
class HidesLatency final : public BlockPlanner {
public:
    HidesLatency(BlockPlanner &p, std::vector<double> hidden) : p_(p), hidden_(std::move(hidden)) {}
    std::string name() const override { return p_.name(); }
    bool assigns_workers() const override { return p_.assigns_workers(); }
    uint64_t next_block(int worker, uint64_t remaining) override { return p_.next_block(worker, remaining); }
    void block_done(const BlockDone &d) override
    {
        BlockDone seen = d;
        seen.transfer_s = std::max(0.0, d.transfer_s - hidden_.at(static_cast<size_t>(d.worker)));
        p_.block_done(seen);
    }

private:
    BlockPlanner &p_;
    std::vector<double> hidden_;
};

TEST(PlbhacLatency, ALatencyTheProfilingDoesNotSeeIsPricedAsOneItSees)
{
    // Two PUs of the same speed; the second pays 0.25 s per block that its blocks' end times
    // show but exec + transfer do not. Priced from exec + transfer alone, it would get half
    // of every step and end every step late; priced from its end times it must do as well
    // as when the latency is reported as transfer time.
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.units = {unit("a.cpu0", "cpu", 1e5), unit("b.gpu0", "gpu", 1e5, 0, 0.25)};
    const auto run = [&](bool hide) {
        PlbhacOptions po;
        PlbhacPlanner plb(sim::planner_workers(s), sim::block_rules(s), po);
        std::vector<PlbhacTraceRecord> trace;
        plb.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
        HidesLatency hiding(plb, {0.0, hide ? 0.25 : 0.0});
        const sim::SimResult r = sim::simulate(s, hiding, {1, false});
        EXPECT_FALSE(r.forced_remainder);
        for (const auto &t : trace)
            if (t.worker == 1) {
                EXPECT_NEAR(t.measured_s, 0.25 + t.size / 1e5, 1e-6) << "its trace shows what the block took";
            }
        return r.makespan_s;
    };
    const double seen = run(false), hidden = run(true);
    std::printf("[ sim      ] latency reported: %.3f s, hidden from the profiling: %.3f s\n", seen, hidden);
    EXPECT_LE(hidden, 1.01 * seen);
    EXPECT_LT(seen, 11.5) << "20 s of work on two PUs of the same speed";
}

TEST(PlbhacLatency, TheNextJobStartsWithTheLatencyItsPredecessorMeasured)
{
    // An iterative application's passes are one job each: with one block per PU and pass,
    // a latency measured only after a block would never price one.
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.units = {unit("a.cpu0", "cpu", 1e5), unit("b.gpu0", "gpu", 1e5, 0, 0.25)};
    PlbhacOptions po;
    po.memory = std::make_shared<PlbhacMemory>();
    {
        PlbhacPlanner first(sim::planner_workers(s), sim::block_rules(s), po);
        HidesLatency hiding(first, {0.0, 0.25});
        sim::simulate(s, hiding, {1, false});
    }
    ASSERT_EQ(po.memory->pus.size(), 2u);
    EXPECT_FALSE(po.memory->pus[1].latency.empty());
    EXPECT_NEAR(plbhac_latency_s(po.memory->pus[1].latency), 0.25, 1e-6);
    EXPECT_NEAR(plbhac_latency_s(po.memory->pus[0].latency), 0.0, 1e-6);

    PlbhacPlanner second(sim::planner_workers(s), sim::block_rules(s), po);
    ASSERT_TRUE(second.warm_started());
    std::vector<PlbhacTraceRecord> trace;
    second.on_trace = [&](const PlbhacTraceRecord &r) { trace.push_back(r); };
    HidesLatency hiding(second, {0.0, 0.25});
    sim::simulate(s, hiding, {1, false});
    ASSERT_FALSE(trace.empty());
    for (const auto &t : trace)
        if (t.worker == 1 && t.predicted_s > 0) {
            EXPECT_NEAR(t.predicted_s, t.measured_s, 0.02 * t.measured_s) << "its first blocks are priced with it";
        }
}

// Forwards to a planner and tells it, after each block, that the block's results reached
// main memory `delay[worker]` seconds after its end (an accelerator's copy back, which the
// job's end waits for), or `busy_delay[worker]` when another block of the worker is in
// flight behind it (the copy back then waits for that one too); remembers each worker's
// latest end.
class ResultsComeHomeLate final : public BlockPlanner {
public:
    ResultsComeHomeLate(BlockPlanner &p, std::vector<double> delay, bool tell, std::vector<double> busy_delay = {})
        : p_(p), delay_(std::move(delay)), busy_delay_(std::move(busy_delay)), tell_(tell),
          last_end_(delay_.size(), 0.0), in_flight_(delay_.size(), 0)
    {}
    std::string name() const override { return p_.name(); }
    bool assigns_workers() const override { return p_.assigns_workers(); }
    uint64_t next_block(int worker, uint64_t remaining) override
    {
        const uint64_t size = p_.next_block(worker, remaining);
        if (size > 0)
            ++in_flight_.at(static_cast<size_t>(worker));
        return size;
    }
    void block_done(const BlockDone &d) override
    {
        p_.block_done(d);
        const size_t w = static_cast<size_t>(d.worker);
        last_end_.at(w) = std::max(last_end_.at(w), d.end_s);
        const bool busy = --in_flight_.at(w) > 0;
        const double delay = busy && !busy_delay_.empty() ? busy_delay_.at(w) : delay_.at(w);
        if (tell_)
            p_.extensions()->results_home({d.worker, d.offset, d.count, d.end_s, d.end_s + delay});
    }
    // When the job really ends: every worker's last results home.
    double job_end() const
    {
        double end = 0;
        for (size_t w = 0; w < delay_.size(); ++w)
            end = std::max(end, last_end_[w] + delay_[w]);
        return end;
    }
    double results_home_s(int worker) const { return last_end_.at(worker) + delay_.at(worker); }

private:
    BlockPlanner &p_;
    std::vector<double> delay_, busy_delay_;
    bool tell_;
    std::vector<double> last_end_;
    std::vector<unsigned> in_flight_;
};

TEST(PlbhacHome, AWorkerWhoseResultsComeHomeLateEndsItsFinalShareThatMuchEarlier)
{
    // Two PUs of the same speed, 20 s of work; the second one's results reach main memory
    // 0.5 s after each of its blocks ends. The job ends when they are home, so its last
    // share must end 0.5 s before the first PU's: the job then ends 0.25 s after an even
    // split would, not 0.5 s. The next job of the same name starts knowing the delay.
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.units = {unit("a.cpu0", "cpu", 1e5), unit("b.gpu0", "gpu", 1e5)};
    const auto run = [&](const PlbhacOptions &po, bool tell) {
        PlbhacPlanner plb(sim::planner_workers(s), sim::block_rules(s), po);
        ResultsComeHomeLate late(plb, {0.0, 0.5}, tell);
        const sim::SimResult r = sim::simulate(s, late, {1, false});
        EXPECT_FALSE(r.forced_remainder);
        std::printf("[ sim      ] %s, delay %s: PUs end %.3f / %.3f s, results home %.3f / %.3f s\n",
                    plb.warm_started() ? "warm" : "cold", tell ? "told" : "not told", late.results_home_s(0),
                    late.results_home_s(1) - 0.5, late.results_home_s(0), late.results_home_s(1));
        return std::pair{late.job_end(), late.results_home_s(1) - late.results_home_s(0)};
    };
    const auto [untold_end, untold_skew] = run(PlbhacOptions(), false);
    EXPECT_NEAR(untold_skew, 0.5, 0.1) << "the control: knowing no delay, the PUs end together";
    const auto [told_end, told_skew] = run(PlbhacOptions(), true);
    EXPECT_NEAR(told_skew, 0.0, 0.1) << "the last results of both PUs come home together";
    EXPECT_LT(told_end, untold_end - 0.15);

    PlbhacOptions po;
    po.memory = std::make_shared<PlbhacMemory>();
    run(po, true);
    ASSERT_EQ(po.memory->pus.size(), 2u);
    EXPECT_NEAR(plbhac_latency_s(po.memory->pus[1].home), 0.5, 1e-9);
    EXPECT_NEAR(plbhac_latency_s(po.memory->pus[0].home), 0.0, 1e-9);
    const auto [warm_end, warm_skew] = run(po, false);
    EXPECT_NEAR(warm_skew, 0.0, 0.1) << "a warm start prices the delay its predecessor measured";
    EXPECT_LT(warm_end, untold_end - 0.15);
}

TEST(PlbhacHome, OnlyADelayWithNothingElseInFlightIsCounted)
{
    // Results that come home late because another block of the PU ran behind them say
    // nothing of what a job's last block pays: here 2 s behind a queued block, 0.1 s when
    // nothing else is in flight. Counted, the 2 s would be the median and the PU's last
    // share would end 2 s early.
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.units = {unit("a.cpu0", "cpu", 1e5), unit("b.gpu0", "gpu", 1e5)};
    PlbhacOptions po;
    po.memory = std::make_shared<PlbhacMemory>();
    PlbhacPlanner plb(sim::planner_workers(s), sim::block_rules(s), po);
    {
        ResultsComeHomeLate late(plb, {0.0, 0.1}, true, {0.0, 2.0});
        sim::simulate(s, late, {1, false});
        EXPECT_NEAR(late.results_home_s(1) - late.results_home_s(0), 0.0, 0.1);
    }
}

TEST(PlbhacSteps, AModelFittedOnNearlyOneSizeIsPricedInProportion)
{
    // K-means' passes on the real node: after a few passes each PU's model window holds
    // blocks of nearly one size (389k-411k elements on the CPU worker, 89k-111k on the
    // OpenCL worker) whose times differ by timing noise alone; the CPU worker's curve fitted
    // there was a constant, 0.027 s at any size. Priced by that curve, the whole pass went
    // to the CPU worker as if free, and the OpenCL worker was left out of every later pass.
    // Here the CPU worker's window holds one time at every size (the extreme of noise
    // uncorrelated with size), and the next pass must split by the speeds the windows show
    // at their sizes, counting the OpenCL worker's latency. (This reproduces the windows,
    // not the real run's flat-curve solve, which also needed the models' exact history.)
    PlbhacOptions po;
    po.memory = std::make_shared<PlbhacMemory>();
    for (int w = 0; w < 2; ++w) {
        PlbhacPuMemory m;
        m.worker = w;
        for (double x : {7812.0, 15624.0})
            m.exec.add(x, w == 0 ? x / 15.2e6 : x / 4e6);
        for (int k = 0; k < 24; ++k) {
            const double x = (w == 0 ? 388'000.0 : 97'000.0) + ((k * 7) % 24) * 600.0;
            m.exec.add(x, w == 0 ? 0.0267 : x / 3.6e6);
        }
        if (w == 1)
            m.latency = {0.0031};
        m.size_lo = 7812;
        m.size_hi = w == 0 ? 403'000 : 112'000;
        po.memory->pus.push_back(std::move(m));
    }
    for (uint64_t total : {500'000u, 400'000u, 600'000u}) {
        PlbhacPlanner p(workers(2), rules(total, 1), po);
        ASSERT_TRUE(p.warm_started());
        const uint64_t c = p.next_block(0, total);
        const uint64_t o = p.next_block(1, total - c);
        std::printf("[ split    ] %llu elements: cpu %llu, opencl %llu\n", (unsigned long long)total,
                    (unsigned long long)c, (unsigned long long)o);
        EXPECT_EQ(c + o, total);
        // Equal finish: the CPU worker at 401.8k / 0.0267 s, the OpenCL worker at 3.6M
        // elements/s after its 3.1 ms latency.
        const double cpu_rate = (388'000 + 23 * 600.0) / 0.0267, ocl_rate = 3.6e6, latency = 0.0031;
        const double end = (static_cast<double>(total) + ocl_rate * latency) / (cpu_rate + ocl_rate);
        EXPECT_NEAR(static_cast<double>(o), ocl_rate * (end - latency), 0.01 * static_cast<double>(total)) << total;
    }
}

TEST(PlbhacSim, AdaptsToASlowdown)
{
    // The fastest unit becomes 2.5 times slower mid-run. Its model notices after a few
    // slow blocks (the online model treats the first ones as possible spikes), and the
    // next solves give it smaller blocks: its share of a step should fall from ~200/460
    // to ~80/340 of the step, i.e. its blocks to ~0.54 of their size.
    sim::Scenario s = three_machines(8'000'000);
    const double t_slow = 6.0;  // the run takes ~18 s with the slowdown
    s.units[0].slowdown = {{t_slow, 2.5}};
    PlbhacOptions po;
    po.x_init = s.x_init;
    po.tail_fraction = 1.0;  // no tail shrink: any size change comes from the models
    po.steps = 32;           // blocks of ~0.4 s, so that the change is seen in time
    po.step_error = 0;       // and no fewer for the GPUs' launch cost (overhead_steps)
    PlbhacPlanner plb(sim::planner_workers(s), sim::block_rules(s), po);
    Spy spy(plb);
    spy.log.reserve(10000);
    const sim::SimResult r = sim::simulate(s, spy, {1, false});
    std::vector<double> before, after;
    for (const Assigned &a : spy.log) {
        if (a.worker != 0 || a.phase != "execution")
            continue;
        if (a.end_s <= t_slow)
            before.push_back(static_cast<double>(a.size));
        else if (a.start_s >= t_slow)
            after.push_back(static_cast<double>(a.size));
    }
    if (!after.empty())
        after.pop_back();  // the last block may be the remainder
    ASSERT_GE(before.size(), 4u);
    ASSERT_GE(after.size(), 8u);
    const std::vector<double> last(after.end() - 4, after.end());
    std::printf("[ sim      ] slowdown x2.5 at %.1f s on A.gpu0: mean block %.0f before, %.0f after (x%.2f), "
                "last four %.0f (x%.2f); makespan %.3f s\n",
                t_slow, mean(before), mean(after), mean(after) / mean(before), mean(last), mean(last) / mean(before),
                r.makespan_s);
    EXPECT_LT(mean(after), 0.8 * mean(before));
    EXPECT_NEAR(mean(last) / mean(before), 0.54, 0.1) << "converged to the new speed";
}

// ---------------------------------------------------------------------------------------
// Refits outside the runner's lock (PlannerExtensions::prepare_refit)

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

// ---------------------------------------------------------------------------------------
// Trust region (solve_step): no block beyond options.trust times the PU's largest measured one

TEST(PlbhacTrust, FirstStepsStayWithinTrustTimesTheMeasuredSizesAndGrow)
{
    // Linear PUs trained on 4096-element blocks; a step of the 4M-element job would be
    // ~500k elements. The first blocks must stay within 4x what each PU has run, and the
    // blocks must grow from step to step as the measured range widens.
    const std::vector<double> spe{4e-5, 1e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.gap_threshold_s = 1e9;
    const uint64_t total = 4'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    const std::vector<uint64_t> second = train_linear(p, spe, total);
    uint64_t rem = total - 20000;
    double hi[2] = {static_cast<double>(std::max<uint64_t>(4096, second[0])),
                    static_cast<double>(std::max<uint64_t>(4096, second[1]))};
    uint64_t prev_fast = 0;
    for (int step = 0; step < 3; ++step) {
        const uint64_t b0 = p.next_block(0, rem), b1 = p.next_block(1, rem);
        ASSERT_GT(b0, 0u);
        ASSERT_GT(b1, 0u);
        EXPECT_LE(static_cast<double>(b0), 4.0 * hi[0] + 64) << "step " << step;
        EXPECT_LE(static_cast<double>(b1), 4.0 * hi[1] + 64) << "step " << step;
        EXPECT_NEAR(static_cast<double>(b1) / b0, 4.0, 0.4) << "still an equal-finish split";
        EXPECT_GT(b1, prev_fast) << "steps grow while the cap binds";
        prev_fast = b1;
        p.block_done(done(0, b0, spe[0] * b0));
        p.block_done(done(1, b1, spe[1] * b1));
        hi[0] = std::max(hi[0], static_cast<double>(b0));
        hi[1] = std::max(hi[1], static_cast<double>(b1));
        rem -= b0 + b1;
    }
}

namespace {

// 1 CPU + 1 GPU whose advantage grows with the block size: 0.9x the CPU per element on
// 1,024 elements, ~20x on large blocks (an occupancy ramp, as node_grow20_* in
// bench/scenarios), 100M elements, ~100 s at the optimum.
sim::Scenario growing_advantage_node()
{
    sim::Scenario s;
    s.workload = 100'000'000;
    s.granule = 64;
    s.x_init = 1024;
    const double cpu_spe = 1.0 / 50000, gpu_spe = cpu_spe / 20;
    sim::UnitSpec cpu, gpu;
    cpu.name = "A.cpu";
    cpu.unit_class = "cpu";
    cpu.noise = 0.03;
    gpu.name = "A.gpu0";
    gpu.unit_class = "gpu";
    gpu.noise = 0.02;
    gpu.latency_s = 0.005;
    for (double x = 64; x <= (1 << 28); x *= 2) {
        cpu.profile.push_back({x, x * cpu_spe});
        const double u = std::min(x / 4096, 1.0);
        gpu.profile.push_back({x, (x + 12 * 4096 * (2 * u - u * u)) * gpu_spe});
    }
    s.units = {cpu, gpu};
    return s;
}

}  // namespace

TEST(PlbhacTrust, AGpuThatLooksSlowInTrainingDoesNotLeaveTheCpuOvercommitted)
{
    // The training measures the GPU on ~1k-element blocks, where it is slower than the CPU.
    // Without the trust region the first step hands the CPU two blocks longer than the
    // whole optimal run (seen: 2-3x the optimum); with it the run stays near the optimum.
    const sim::Scenario s = growing_advantage_node();
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const sim::StaticDistribution opt = sim::optimum_distribution(units, s.workload, s.granule);
    auto run = [&](double trust, uint64_t seed) {
        PlbhacOptions o;
        o.x_init = s.x_init;
        o.trust = trust;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        return sim::simulate(s, p, {seed, false});
    };
    const sim::SimResult without = run(0, 1);
    EXPECT_GT(without.makespan_s, 1.5 * opt.makespan_s) << "the scenario must show the failure it guards against";
    for (uint64_t seed : {1u, 2u}) {
        const sim::SimResult r = run(4.0, seed);
        std::printf("[ sim      ] growing GPU advantage, seed %u: plb-hac x%.3f of the optimum (x%.3f without the "
                    "trust region); CPU %llu elements (optimum %llu)\n",
                    static_cast<unsigned>(seed), r.makespan_s / opt.makespan_s, without.makespan_s / opt.makespan_s,
                    static_cast<unsigned long long>(r.units[0].elements),
                    static_cast<unsigned long long>(opt.blocks[0]));
        EXPECT_LE(r.makespan_s, 1.05 * opt.makespan_s) << "seed " << seed;
        EXPECT_LE(static_cast<double>(r.units[0].elements), 1.1 * static_cast<double>(opt.blocks[0]))
            << "seed " << seed;
    }
}

namespace {

// A node of one CPU and one GPU whose profiles are the given times at sizes doubling from
// `smallest` to 2^30 elements.
sim::Scenario cpu_gpu_node(uint64_t workload, uint64_t granule, uint64_t x_init, double smallest, double noise,
                           const std::function<double(double)> &cpu_s, const std::function<double(double)> &gpu_s)
{
    sim::Scenario s;
    s.workload = workload;
    s.granule = granule;
    s.x_init = x_init;
    sim::UnitSpec cpu, gpu;
    cpu.name = "A.cpu";
    cpu.unit_class = "cpu";
    cpu.noise = noise;
    gpu.name = "A.gpu0";
    gpu.unit_class = "gpu";
    gpu.noise = noise;
    for (double x = smallest; x <= (1 << 30); x *= 2) {
        cpu.profile.push_back({x, cpu_s(x)});
        gpu.profile.push_back({x, gpu_s(x)});
    }
    s.units = {cpu, gpu};
    return s;
}

}  // namespace

TEST(PlbhacTrust, AFlatModelBeyondTinyTrainingBlocksDoesNotStallTheSteps)
{
    // One-element training blocks: the GPU's fixed cost (40 ms for anything up to a few
    // thousand elements) is all it shows, so its model makes a large block look free and
    // the first solve gives it most of the step, far past its trust region. Shrinking the
    // step by that excess lands on steps of a few milliseconds, too short for the GPU's
    // fixed cost, so it never gets a block and the trust region never widens (seen: steps
    // of ~5k elements in a 55 s job, thousands of solves). Capping the GPU instead keeps
    // the steps growing, and the run ends near the optimum in a bounded number of blocks.
    const sim::Scenario s = cpu_gpu_node(
        200'000'000, 1, 1, 1, 0.0, [](double x) { return x * 1e-6; }, [](double x) { return 0.04 + x * 1e-8; });
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const sim::StaticDistribution opt = sim::optimum_distribution(units, s.workload, s.granule);
    PlbhacOptions o;
    o.x_init = s.x_init;
    PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
    // A stalled run would take minutes of solves: stop it after far more blocks than a
    // sound one needs (about 50).
    size_t completed = 0;
    p.on_trace = [&](const PlbhacTraceRecord &) {
        if (++completed > 2000)
            throw std::runtime_error("more than 2000 blocks: the steps stopped growing");
    };
    sim::SimResult r;
    ASSERT_NO_THROW(r = sim::simulate(s, p, {1, false}));
    std::printf("[ sim      ] flat GPU model after one-element training: x%.3f of the optimum, %u blocks, %zu "
                "steps solved\n",
                r.makespan_s / opt.makespan_s, r.blocks, p.solve_times_s().size());
    EXPECT_LE(p.solve_times_s().size(), 40u);
    // The trust region's ramp from one element to millions (about 13 GPU blocks of 40 ms
    // each) is a quarter of this 2 s job by itself.
    EXPECT_LE(r.makespan_s, 1.6 * opt.makespan_s);
}

TEST(PlbhacSteps, APuSlowerPerElementOnLargerBlocksIsHeldAtItsEfficientSize)
{
    // A GPU whose time per element grows past 1M elements (its memory exceeded: 4x dearer
    // per element at 16M) and a linear CPU. Steps of an eighth of the job would hand the
    // GPU blocks of ~20M elements. No plan beats every unit running at its best rate
    // throughout, W / sum of max x / T(x); holding the GPU near its efficient size gets
    // close to that, where large steps take about twice as long.
    const sim::Scenario s = cpu_gpu_node(
        200'000'000, 64, 4096, 64, 0.03, [](double x) { return x * 1e-6; },
        [](double x) { return 0.002 + x * 1e-7 * std::max(1.0, std::sqrt(x / (1 << 20))); });
    double best_rate = 1e6;  // the CPU's, at every size
    double gpu_best = 0;
    for (const auto &[x, t] : s.units[1].profile)
        gpu_best = std::max(gpu_best, x / t);
    best_rate += gpu_best;
    const double bound = static_cast<double>(s.workload) / best_rate;
    for (uint64_t seed : {1u, 2u}) {
        PlbhacOptions o;
        o.x_init = s.x_init;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        const sim::SimResult r = sim::simulate(s, p, {seed, false});
        std::printf("[ sim      ] GPU dearer per element past 1M, seed %u: plb-hac x%.3f of the best-rate bound, "
                    "%u blocks\n",
                    static_cast<unsigned>(seed), r.makespan_s / bound, r.blocks);
        EXPECT_LE(r.makespan_s, 1.15 * bound) << "seed " << seed;
        EXPECT_FALSE(r.forced_remainder) << "the split shares hand out the whole job";
        // Once held, the GPU runs no block of the large, dear sizes it was measured at.
        for (const auto &b : r.trace) {
            if (b.unit == 1 && b.start_s > r.makespan_s / 2) {
                EXPECT_LE(b.count, 2'000'000u) << "seed " << seed << " at " << b.start_s << " s";
            }
        }
    }
}

TEST(PlbhacTraining, OneFastAcceleratorBesideManySlowCpusIsNotHeldToEvenShares)
{
    // matmul of order 4096 on one GPU and 15 CPU workers, in columns of 32 (rates measured
    // on a node of one H200): a CPU takes 88 ms for its smallest block, the GPU ~75 ms for
    // the whole job, so the best distribution leaves every CPU out. While the CPUs run
    // their first training block, the waiting GPU once took blocks of at most a quarter of
    // an even share (64 columns, 1.5 ms, mostly launch cost): it had done about half of the
    // job when they finished, and each CPU then took a second training block or a probe,
    // 2.4x the optimum. Sized by the least share the measurements allow it, the GPU ends
    // the job during the CPUs' first block. That job ends during its training, and still
    // hands on what every PU measured: the next run starts from it, gives the CPUs nothing
    // and no probe either (a CPU's smallest block outlasts the job), and ends near the
    // optimum.
    sim::Scenario s = fifteen_cpus_and_a_gpu(
        4096, 32, 0.03, 2e-6, 32, 4096, [](double x) { return 1e-4 + 2.75e-3 * x; },
        [](double x) { return 5e-4 + 1.6e-5 * x; });
    s.x_init = 32;
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const sim::StaticDistribution opt = sim::optimum_distribution(units, s.workload, s.granule);
    const auto cpu_blocks = [](const sim::SimResult &r) {
        unsigned n = 0;
        for (const auto &b : r.trace)
            n += b.unit != 15;
        return n;
    };
    for (uint64_t seed : {1u, 2u, 3u}) {
        auto memory = std::make_shared<PlbhacMemory>();
        sim::SimResult cold, warm;
        bool warm_started = false;
        {
            PlbhacOptions o;
            o.x_init = s.x_init;
            o.memory = memory;
            PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
            cold = sim::simulate(s, p, {seed, false});
            EXPECT_TRUE(p.training()) << "seed " << seed << ": the job ended after the training";
        }
        {
            PlbhacOptions o;
            o.x_init = s.x_init;
            o.memory = memory;
            PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
            warm_started = p.warm_started();
            warm = sim::simulate(s, p, {seed + 10, false});
        }
        std::printf("[ sim      ] 15 CPUs + 1 GPU, matmul 4096, seed %u: plb-hac x%.3f of the optimum cold (%u CPU "
                    "blocks), x%.3f warm (%u)\n",
                    static_cast<unsigned>(seed), cold.makespan_s / opt.makespan_s, cpu_blocks(cold),
                    warm.makespan_s / opt.makespan_s, cpu_blocks(warm));
        // One training block per CPU is the cost of starting cold (88 ms of a 75 ms job).
        EXPECT_EQ(cpu_blocks(cold), 15u) << "seed " << seed;
        EXPECT_LE(cold.makespan_s, 1.35 * opt.makespan_s) << "seed " << seed;
        EXPECT_TRUE(warm_started) << "seed " << seed;
        EXPECT_EQ(cpu_blocks(warm), 0u) << "seed " << seed;
        EXPECT_LE(warm.makespan_s, 1.06 * opt.makespan_s) << "seed " << seed;
    }
}

TEST(PlbhacTraining, ASlowPuWaitingForTheSynchronisationDoesNotOutlastAShortJob)
{
    // A job of about a second at the optimum on a fast GPU and CPU, a PU 20x slower (its
    // training blocks take a third of the job) and one whose first training block alone
    // outlasts the job, so the job ends before the training synchronisation. The slow PU's
    // waiting blocks double while it waits; capped only by a share of the job (a quarter of
    // an even share of the job: 125k elements, 2.5 s at its speed; or of what is left),
    // its last one ran 0.3-0.5 s past everybody else's end: 1.27-1.45x the bound below.
    // Capped by the end the measured PUs alone would reach, it ends with them.
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 256;
    s.x_init = 16384;
    s.units = {unit("a.gpu", "gpu", 1e6, 1e-3, 0, 0, 0.02), unit("b.cpu", "cpu", 1e6, 0, 0, 0, 0.02),
               unit("c.phi", "phi", 5e4, 0, 0, 0, 0.02), unit("d.gpu", "gpu", 1.6e4, 0, 0, 0, 0.02)};
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const sim::StaticDistribution opt = sim::optimum_distribution(units, s.workload, s.granule);
    // No cold start avoids the slowest PU's first training block (x_init at 16k per second).
    const double bound = std::max(opt.makespan_s, units[3].nominal_cost(s.x_init).total());
    for (uint64_t seed : {1u, 2u, 3u}) {
        PlbhacOptions o;
        o.x_init = s.x_init;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        const sim::SimResult r = sim::simulate(s, p, {seed, false});
        double phi_end = 0;
        for (const auto &b : r.trace)
            if (b.unit == 2)
                phi_end = std::max(phi_end, b.end_s);
        std::printf("[ sim      ] a slow PU waiting in a short job, seed %u: plb-hac x%.3f of the bound, the slow "
                    "PU's last block ends at %.3f s of %.3f\n",
                    static_cast<unsigned>(seed), r.makespan_s / bound, phi_end, r.makespan_s);
        EXPECT_TRUE(p.training()) << "seed " << seed << ": the job was to end before the synchronisation";
        EXPECT_LE(r.makespan_s, 1.12 * bound) << "seed " << seed;
        EXPECT_FALSE(r.forced_remainder) << "seed " << seed;
    }
}

TEST(PlbhacTrust, AnAcceleratorWhoseTimeStaysFlatGrowsItsBlocksFaster)
{
    // One k-means-like pass (16 ms at the optimum) on 4 CPU workers and a GPU whose blocks
    // cost a 1.3 ms launch and transfer set-up whatever their size below a million points.
    // Its blocks grew at most 3x per block from its 4k-point training blocks, 7 blocks in
    // all, 1.31-1.34x the optimum; while its time has not grown with its size, the trust
    // region allows 16x (the block after costs at most 16x a flat time), and it grows ~10x
    // at once: 6 blocks, 1.24-1.32x. (The rest of the gap is the CPUs' training.)
    sim::Scenario s;
    s.workload = 2'000'000;
    s.granule = 64;
    s.x_init = 3904;
    for (int i = 0; i < 4; ++i)
        s.units.push_back(unit("A.cpu" + std::to_string(i), "cpu", 4.5e6, 2e-5, 0, 0, 0.03));
    s.units.push_back(unit("A.gpu0", "gpu", 1.25e8, 3e-4, 1e-3, 8e-9, 0.02));
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const sim::StaticDistribution opt = sim::optimum_distribution(units, s.workload, s.granule);
    for (uint64_t seed : {1u, 2u, 3u}) {
        PlbhacOptions o;
        o.x_init = s.x_init;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        const sim::SimResult r = sim::simulate(s, p, {seed, false});
        std::vector<uint64_t> gpu;
        for (const auto &b : r.trace)
            if (b.unit == 4)
                gpu.push_back(b.count);
        uint64_t largest_growth = 0;
        for (size_t k = 1; k < gpu.size(); ++k)
            largest_growth = std::max(largest_growth, gpu[k] / std::max<uint64_t>(gpu[k - 1], 1));
        std::printf("[ sim      ] flat-time GPU beside 4 CPUs, seed %u: plb-hac x%.3f of the optimum, %zu GPU blocks, "
                    "largest growth x%llu\n",
                    static_cast<unsigned>(seed), r.makespan_s / opt.makespan_s, gpu.size(),
                    static_cast<unsigned long long>(largest_growth));
        EXPECT_GT(largest_growth, 4u) << "seed " << seed;
        EXPECT_LE(gpu.size(), 6u) << "seed " << seed;
        EXPECT_LE(r.makespan_s, 1.4 * opt.makespan_s) << "seed " << seed;
    }
}

TEST(PlbhacTrust, AWarmStartTrustsAFlatAcceleratorFromItsSavedBlocks)
{
    // A GPU whose saved blocks, 2k to 63k points, all took ~8 ms (a 6.5 ms launch and
    // transfer set-up), beside 4 CPUs: its share of a 2M-point pass is far beyond 4x its
    // largest saved block. Its time has not grown with its size there, so the trust region
    // allows 16x from the first solve of a warm start, as it would once this run measured
    // two sizes; with the saved blocks ignored the first solve held it to 4x (252k points)
    // and the CPUs took the rest.
    auto memory = std::make_shared<PlbhacMemory>();
    for (int w = 0; w < 5; ++w) {
        const bool gpu = w == 4;
        PlbhacPuMemory m;
        m.worker = w;
        for (double x : gpu ? std::vector<double>{1920, 3904, 63040} : std::vector<double>{30000, 60000, 90000})
            EXPECT_NO_THROW(m.exec.add(x, gpu ? 3e-4 + 8e-9 * x : 2.2e-7 * x));
        if (gpu)
            m.latency = {0.0065};
        m.size_lo = m.exec.points().front().first;
        m.size_hi = m.exec.points().back().first;
        memory->pus.push_back(std::move(m));
    }
    std::vector<PlannerWorker> w = workers(5);
    w[4].kind = WorkerKind::Cuda;
    const uint64_t total = 2'000'000;
    PlbhacOptions o;
    o.memory = memory;
    PlbhacPlanner p(w, rules(total), o);
    ASSERT_TRUE(p.warm_started());
    const uint64_t gpu = p.next_block(4, total);
    std::printf("[ plan     ] a warm flat GPU's first block: %llu points (4x its largest saved block: %d)\n",
                static_cast<unsigned long long>(gpu), 4 * 63040);
    EXPECT_GT(gpu, 4u * 63040u);
    EXPECT_LE(gpu, 16u * 63040u);
}

TEST(PlbhacSteps, AFewMillisecondsOfJitterDoNotHoldAPu)
{
    // A lone PU, linear at 0.125 ms per element, except that its first large block ran 1.5x
    // dearer per element (a loaded machine's scheduling: the block is a few milliseconds).
    // Held at its "efficient" training size, it would run the rest of the job in blocks of
    // 16 elements, and a hold is never lifted. So blocks that short are not evidence of a
    // convex curve, even when the step length (min_step_s) does not bound them.
    const double spe = 1.25e-4;
    PlbhacOptions o;
    o.x_init = 16;
    o.min_step_s = 0;
    o.gap_threshold_s = 1e9;
    const uint64_t total = 100'000;
    PlbhacPlanner p(workers(1), rules(total, 16), o);
    uint64_t left = total;
    double now = 0;
    auto run = [&](uint64_t x, double slower) {
        now += slower * spe * static_cast<double>(x);
        p.block_done(done(0, x, slower * spe * static_cast<double>(x), now));
        left -= x;
    };
    const uint64_t t1 = p.next_block(0, left);
    run(t1, 1.0);
    const uint64_t t2 = p.next_block(0, left);
    run(t2, 1.0);
    const uint64_t b1 = p.next_block(0, left);
    ASSERT_GE(b1, 3 * t2) << "the ramp grows the first execution block";
    run(b1, 1.5);
    const uint64_t b2 = p.next_block(0, left);
    EXPECT_GT(b2, b1) << "a jitter of a few ms held the PU at " << b2 << " elements";
}

TEST(PlbhacSteps, ALonePuIsNotCutIntoSteps)
{
    // One accelerator, cheaper per element on larger blocks (an occupancy ramp up to ~64k
    // elements, then linear): with nothing to balance, cutting its work into eight steps
    // only multiplies its per-block cost. The trust region's ramp from x_init stays.
    sim::Scenario s;
    s.workload = 340'000;
    s.granule = 16;
    s.x_init = 64;
    sim::UnitSpec gpu;
    gpu.name = "A.gpu0";
    gpu.unit_class = "gpu";
    gpu.noise = 0.02;
    for (double x = 16; x <= (1 << 24); x *= 2)
        gpu.profile.push_back({x, 0.01 + 3e-6 * x * (1 + 65536 / (x + 65536))});
    s.units = {gpu};
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const sim::StaticDistribution opt = sim::optimum_distribution(units, s.workload, s.granule);
    for (uint64_t seed : {1u, 2u}) {
        PlbhacOptions o;
        o.x_init = s.x_init;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        const sim::SimResult r = sim::simulate(s, p, {seed, false});
        std::printf("[ sim      ] lone accelerator, seed %u: plb-hac x%.3f of the job in one block, %u blocks\n",
                    static_cast<unsigned>(seed), r.makespan_s / opt.makespan_s, r.blocks);
        EXPECT_LE(r.makespan_s, 1.25 * opt.makespan_s) << "seed " << seed;
        EXPECT_LE(r.blocks, 10u) << "seed " << seed;
    }
}

TEST(PlbhacOptions, TrustIsAnOption)
{
    PlbhacOptions o;
    std::map<std::string, std::string> env{{"HETPU_PLBHAC_TRUST", "8"}};
    auto lookup = [&](const char *n) -> const char * {
        auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    EXPECT_NO_THROW(plbhac_options_from_env(o, lookup));
    EXPECT_EQ(o.trust, 8.0);
    env["HETPU_PLBHAC_TRUST"] = "0.5";
    EXPECT_THROW_MSG(plbhac_options_from_env(o, lookup), PlbhacInputError,
                     "HETPU_PLBHAC_TRUST must be 0 (no cap) or a factor >= 1 over a PU's largest measured block");
    EXPECT_EQ(o.trust, 8.0) << "unchanged on error";
}

TEST(PlbhacOptions, SolverIsAnOption)
{
    PlbhacOptions o;
    EXPECT_EQ(o.solver, hetpu::PlbhacSolver::Auto);
    std::map<std::string, std::string> env{{"HETPU_PLBHAC_SOLVER", "ipopt"}};
    auto lookup = [&](const char *n) -> const char * {
        auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    EXPECT_NO_THROW(plbhac_options_from_env(o, lookup));
    EXPECT_EQ(o.solver, hetpu::PlbhacSolver::Ipopt);
    env["HETPU_PLBHAC_SOLVER"] = "newton";
    EXPECT_THROW_MSG(plbhac_options_from_env(o, lookup), PlbhacInputError,
                     "HETPU_PLBHAC_SOLVER must be auto (the equal-finish search where every curve increases");
    EXPECT_EQ(o.solver, hetpu::PlbhacSolver::Ipopt) << "unchanged on error";
    env["HETPU_PLBHAC_SOLVER"] = "auto";
    EXPECT_NO_THROW(plbhac_options_from_env(o, lookup));
    EXPECT_EQ(o.solver, hetpu::PlbhacSolver::Auto);
}

TEST(PlbhacMemory, AWarmStartReadsTheFixedCostOffItsSavedBlocksFromTheFirstStep)
{
    // A CPU (1e-4 s per element) next to an accelerator that pays 0.5 s per block (then 1e-5
    // s per element), a ~20 s job: a step of an eighth costs the accelerator a fifth of its
    // time in fixed costs. The saved blocks show that cost, so the first step of a warm
    // start is already sized by it (overhead_steps: sqrt(step_error T / c) rounded up, 4 here,
    // the least allowed): a quarter of the job, not the eighth warm_steps gives when the
    // rule is off (step_error = 0) or only read from this run's own blocks.
    auto memory = std::make_shared<PlbhacMemory>();
    for (int w = 0; w < 2; ++w) {
        PlbhacPuMemory m;
        m.worker = w;
        for (double x : {4096.0, 25000.0, 50000.0, 100000.0, 200000.0, 400000.0})
            EXPECT_NO_THROW(m.exec.add(x, w == 0 ? 1e-4 * x : 0.5 + 1e-5 * x));
        m.size_lo = 4096;
        m.size_hi = 400000;
        memory->pus.push_back(std::move(m));
    }
    const uint64_t total = 2'000'000;
    for (double step_error : {0.1, 0.0}) {
        PlbhacOptions o;
        o.memory = std::make_shared<PlbhacMemory>(*memory);
        o.step_error = step_error;
        o.trust = 0;  // the step's size alone, not the trust region's cap on the accelerator
        PlbhacPlanner p(workers(2), rules(total), o);
        ASSERT_TRUE(p.warm_started());
        const uint64_t b0 = p.next_block(0, total), b1 = p.next_block(1, total);
        const double expected = static_cast<double>(total) / (step_error > 0 ? 4 : o.warm_steps);
        EXPECT_NEAR(static_cast<double>(b0 + b1), expected, 0.02 * expected) << "step_error " << step_error;
    }
}

TEST(PlbhacMemory, AnAcceleratorWhoseTimeDoesNotGrowWithItsBlocksShowsItsFixedCost)
{
    // A CPU (1e-4 s per element) next to an accelerator that took 0.5 s at every size from
    // 4k to 400k elements (a launch or set-up cost that dwarfs its work): its blocks'
    // least-squares line does not rise, so their time is all fixed cost. An 8M-element job
    // (~10 s): the first step of a warm start is sized by that cost (a quarter of the job,
    // the least min_steps allows) instead of the eighth of PUs without one. A 2M-element job
    // (~2.5 s), where 4 steps' fixed costs would take most of it: the floor gives way, and
    // the first step is the whole job. Blocks a little faster as they grew (noise) read the
    // same.
    for (double fall : {0.0, 0.01}) {
        auto memory = std::make_shared<PlbhacMemory>();
        for (int w = 0; w < 2; ++w) {
            PlbhacPuMemory m;
            m.worker = w;
            int i = 0;
            for (double x : {4096.0, 25000.0, 50000.0, 100000.0, 200000.0, 400000.0})
                EXPECT_NO_THROW(m.exec.add(x, w == 0 ? 1e-4 * x : 0.5 * (1.0 - fall * i++)));
            m.size_lo = 4096;
            m.size_hi = 400000;
            memory->pus.push_back(std::move(m));
        }
        for (uint64_t total : {8'000'000ull, 2'000'000ull})
            for (double step_error : {0.1, 0.0}) {
                PlbhacOptions o;
                o.memory = memory;
                o.step_error = step_error;
                o.trust = 0;
                PlbhacPlanner p(workers(2), rules(total), o);
                ASSERT_TRUE(p.warm_started());
                const uint64_t b0 = p.next_block(0, total), b1 = p.next_block(1, total - b0);
                const double steps = step_error == 0 ? o.warm_steps : total > 2'000'000 ? 4 : 1;
                const double expected = static_cast<double>(total) / steps;
                EXPECT_NEAR(static_cast<double>(b0 + b1), expected, 0.02 * expected)
                    << "total " << total << ", step_error " << step_error << ", fall " << fall;
            }
    }
}

TEST(PlbhacMemory, AWarmStartCutsTheJobIntoWarmSteps)
{
    // Models measured over a whole earlier run (sizes up to 400k): the first step of a
    // warm-started planner is a quarter of the job (warm_steps = 4), not an eighth, and
    // with steps = warm_steps the two agree (the option is what changes it).
    const std::vector<double> spe{1e-4, 2.5e-5};
    auto memory = std::make_shared<PlbhacMemory>();
    for (int w = 0; w < 2; ++w) {
        PlbhacPuMemory m;
        m.worker = w;
        for (double x : {4096.0, 50000.0, 100000.0, 200000.0, 400000.0})
            EXPECT_NO_THROW(m.exec.add(x, spe[w] * x));
        m.size_lo = 4096;
        m.size_hi = 400000;
        memory->pus.push_back(std::move(m));
    }
    const uint64_t total = 1'000'000;
    for (unsigned warm_steps : {4u, 8u}) {
        PlbhacOptions o;
        o.memory = std::make_shared<PlbhacMemory>(*memory);
        o.warm_steps = warm_steps;
        PlbhacPlanner p(workers(2), rules(total), o);
        ASSERT_TRUE(p.warm_started());
        const uint64_t b0 = p.next_block(0, total), b1 = p.next_block(1, total);
        EXPECT_NEAR(static_cast<double>(b0 + b1), static_cast<double>(total) / warm_steps, 0.02 * total / warm_steps)
            << "warm_steps " << warm_steps;
        EXPECT_NEAR(static_cast<double>(b1) / b0, 4.0, 0.2);
    }
}

TEST(PlbhacSteps, AJobTooShortForItsStepsTakesFewer)
{
    // 1M elements at 5M and 10M elements/s: ~0.07 s of work after training, less than one
    // min_step_s (0.2 s): one step, each PU one block ending together. With min_step_s = 0
    // the job is cut into the configured 8 steps as before.
    const std::vector<double> spe{2e-7, 1e-7};
    const uint64_t total = 1'000'000;
    for (double min_step_s : {0.2, 0.0}) {
        PlbhacOptions o;
        o.x_init = 4096;
        o.trust = 0;
        o.min_step_s = min_step_s;
        PlbhacPlanner p(workers(2), rules(total), o);
        train_linear(p, spe, total);
        const uint64_t rem = total - 20000;
        const uint64_t b0 = p.next_block(0, rem), b1 = p.next_block(1, rem);
        if (min_step_s > 0)
            EXPECT_EQ(b0 + b1, rem) << "one step: everything left";
        else
            EXPECT_NEAR(static_cast<double>(b0 + b1), rem / 8.0, 0.05 * rem / 8.0);
        EXPECT_NEAR(static_cast<double>(b1) / b0, 2.0, 0.2);
    }
}

TEST(PlbhacRamp, ABlockBeyondTheMeasuredSizesHoldsTheNextUntilItIsMeasured)
{
    // While the trust region grows a PU's blocks, each new block is sized from the PU's
    // measurements; a second block sized while the first is still unmeasured would grow
    // only from the sizes before it and pay one more fixed per-block cost.
    const std::vector<double> spe{4e-5, 1e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.gap_threshold_s = 1e9;
    const uint64_t total = 4'000'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    const std::vector<uint64_t> second = train_linear(p, spe, total);
    const uint64_t rem = total - 20000;
    const uint64_t b1 = p.next_block(1, rem);
    ASSERT_GT(b1, 2 * std::max<uint64_t>(4096, second[1])) << "the first step extrapolates (the trust region binds)";
    EXPECT_EQ(p.next_block(1, rem - b1), 0u) << "the next block waits for the measurement of the first";
    p.block_done(done(1, b1, spe[1] * b1));
    const uint64_t b2 = p.next_block(1, rem - b1);
    EXPECT_GT(b2, b1 * 3 / 2) << "grown from the measured block";
    EXPECT_LE(static_cast<double>(b2), 4.0 * b1 + 64);
}

TEST(PlbhacFinal, ASlowdownAfterTheFinalSolveResharesWhatIsNotTaken)
{
    // One step: the first solve is the final one. PU 0 takes its share; PU 1 then reports a
    // block 4x slower than its model. Its old share would run ~4x its predicted time while
    // PU 0 idles; re-solving what is not taken gives PU 1 less and PU 0 the rest.
    const std::vector<double> spe{1e-5, 1e-5};
    PlbhacOptions o;
    o.x_init = 4096;
    o.steps = 1;
    o.trust = 0;
    o.gap_threshold_s = 1e9;
    const uint64_t total = 400'000;
    PlbhacPlanner p(workers(2), rules(total), o);
    train_linear(p, spe, total);
    uint64_t rem = total - 20000;
    const uint64_t a0 = p.next_block(0, rem);
    ASSERT_GT(a0, 0u);
    rem -= a0;
    const uint64_t reserved = rem;
    p.block_done(done(1, 16384, 4 * spe[1] * 16384));
    const uint64_t a1 = p.next_block(1, rem);
    EXPECT_LT(static_cast<double>(a1), 0.6 * static_cast<double>(reserved)) << "sized for the slower PU";
    rem -= a1;
    EXPECT_GT(p.next_block(0, rem), 0u) << "the faster PU takes what the slowed one no longer can";
}

TEST(PlbhacSteps, AFixedCostPerBlockTakesFewerLargerSteps)
{
    // Two GPUs pay 0.25 s per block whatever its size, in a ~10 s job: with 8 steps and the
    // tail that is a fifth of the run. Their fixed cost, read off their measured blocks,
    // makes the later steps fewer and larger (overhead_steps): fewer blocks than with
    // step_error = 0 (always the configured steps) on the same seeds, and no later end.
    sim::Scenario s;
    s.workload = 7'500'000;
    s.granule = 64;
    s.x_init = 8192;
    s.units = {unit("A.gpu0", "gpu", 400e3, 0.25, 0, 0, 0.02), unit("B.gpu0", "gpu", 300e3, 0.25, 0, 0, 0.02),
               unit("A.cpu", "cpu", 50e3, 0.001, 0, 0, 0.02)};
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const double optimum = sim::optimum_distribution(units, s.workload, s.granule).makespan_s;
    for (uint64_t seed : {1u, 2u}) {
        sim::SimResult r[2];
        for (int on : {0, 1}) {
            PlbhacOptions po;
            po.x_init = s.x_init;
            po.step_error = on ? 0.1 : 0.0;
            PlbhacPlanner plb(sim::planner_workers(s), sim::block_rules(s), po);
            r[on] = sim::simulate(s, plb, {seed, false});
            EXPECT_FALSE(r[on].forced_remainder);
        }
        std::printf("[ sim      ] seed %u: optimum %.3f s; 8 steps %.3f s (x%.3f, %u blocks), fixed-cost steps "
                    "%.3f s (x%.3f, %u blocks)\n",
                    static_cast<unsigned>(seed), optimum, r[0].makespan_s, r[0].makespan_s / optimum, r[0].blocks,
                    r[1].makespan_s, r[1].makespan_s / optimum, r[1].blocks);
        EXPECT_LE(r[1].blocks + 6, r[0].blocks) << "seed " << seed;
        EXPECT_LT(r[1].makespan_s, 1.03 * r[0].makespan_s) << "seed " << seed;
    }
}

namespace {

// End-time spread and makespan of one simulated run.
struct RunEnds {
    double makespan_s = 0, spread_s = 0;
};

RunEnds run_ends(const sim::Scenario &s, const PlbhacOptions &o, uint64_t seed)
{
    PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
    const sim::SimResult r = sim::simulate(s, p, {seed, false});
    std::map<int, double> last_end;
    for (const auto &b : r.trace)
        last_end[b.unit] = std::max(last_end[b.unit], b.end_s);
    double first = r.makespan_s;
    for (const auto &[u, end] : last_end)
        first = std::min(first, end);
    return {r.makespan_s, r.makespan_s - first};
}

}  // namespace

TEST(PlbhacFinal, AStepThatWouldOutlastTheJobBecomesTheFinalOne)
{
    // Few, long steps (the fixed-cost rule's minimum of 2) and two blocks queued per PU: a PU
    // entering a regular step near the end commits to a block that outlasts what the others
    // have left, and they idle while it runs (seeds 1 and 5 here: 11.08 s and 10.88 s against
    // 10.38 s and 10.66 s). With final_past_end that step is solved as the final one, every
    // queue counted. Deterministic runs (no planning time charged), compared seed by seed.
    sim::Scenario s;
    s.workload = 6'000'000;
    s.granule = 64;
    s.x_init = 4096;
    s.units = {unit("A.gpu0", "gpu", 200e3, 0.2, 0, 0, 0.03), unit("B.gpu0", "gpu", 150e3, 0.2, 0, 0, 0.03),
               unit("C.gpu0", "gpu", 250e3, 0.2, 0, 0, 0.03), unit("D.gpu0", "gpu", 100e3, 0.2, 0, 0, 0.03),
               unit("A.cpu", "cpu", 20e3, 0.01, 0, 0, 0.03),  unit("B.cpu", "cpu", 15e3, 0.01, 0, 0, 0.03)};
    double sum[2] = {0, 0};
    for (uint64_t seed = 1; seed <= 6; ++seed) {
        RunEnds e[2];
        for (int on : {0, 1}) {
            PlbhacOptions o;
            o.x_init = s.x_init;
            o.min_steps = 2;
            o.step_error = 0.05;
            o.final_past_end = on;
            e[on] = run_ends(s, o, seed);
            sum[on] += e[on].makespan_s;
        }
        EXPECT_LT(e[1].makespan_s, 1.005 * e[0].makespan_s) << "seed " << seed;
    }
    EXPECT_LT(sum[1], 0.99 * sum[0]) << "mean makespan " << sum[1] / 6 << " s against " << sum[0] / 6 << " s";
}

TEST(PlbhacFinal, EachShareIsResizedWithWhatWasMeasuredBeforeItIsTaken)
{
    // GPUs whose time per element falls with the block size (a fixed cost that saturates at
    // 8k elements, as GRN's): their queued blocks, priced by curves extrapolated beyond the
    // sizes they have run, and with 4% timing noise, end earlier or later than the final
    // solve assumed. Re-solving the untaken shares when a PU comes for its own after such a
    // miss brings the PUs' end times closer: mean spread 0.48 s without, 0.33 s with, over
    // 6 seeds.
    sim::Scenario s;
    s.workload = 1'800'000;
    s.granule = 64;
    s.x_init = 1024;
    auto gpu = [](const std::string &name, double rate, double fixed, double saturation) {
        sim::UnitSpec u = unit(name, "gpu", rate, 0, 0, 0, 0.04);
        u.profile.clear();
        for (double x = 64; x <= (1 << 23); x *= 2)
            u.profile.push_back({x, x / rate + fixed * x / (x + saturation)});
        return u;
    };
    s.units = {gpu("A.gpu0", 40e3, 0.2, 8192),
               gpu("B.gpu0", 30e3, 0.2, 8192),
               gpu("C.gpu0", 50e3, 0.2, 8192),
               gpu("D.gpu0", 35e3, 0.2, 8192),
               unit("A.cpu", "cpu", 2e3, 0.01, 0, 0, 0.03),
               unit("B.cpu", "cpu", 1.5e3, 0.01, 0, 0, 0.03)};
    double spread[2] = {0, 0}, makespan[2] = {0, 0};
    for (uint64_t seed = 1; seed <= 6; ++seed)
        for (int on : {0, 1}) {
            PlbhacOptions o;
            o.x_init = s.x_init;
            o.reshare_final = on;
            const RunEnds e = run_ends(s, o, seed);
            spread[on] += e.spread_s;
            makespan[on] += e.makespan_s;
        }
    std::printf("[ sim      ] mean end-time spread %.3f s without the re-solve, %.3f s with; mean makespan %.3f s, "
                "%.3f s\n",
                spread[0] / 6, spread[1] / 6, makespan[0] / 6, makespan[1] / 6);
    EXPECT_LT(spread[1], 0.85 * spread[0]);
    EXPECT_LE(makespan[1], makespan[0]);
}

// ---------------------------------------------------------------------------------------
// Straggle hedge (hedge_final)

namespace {

// 15 CPU workers with 20% timing scatter beside one steady GPU 170x as fast as one of them:
// the CPUs are worth 8% of the node (grn with 600 genes on a node of one H200, as its
// traces showed), and a job of ~0.1 s is one step, one block per CPU.
sim::Scenario noisy_cpus_beside_a_steady_gpu()
{
    sim::Scenario s = fifteen_cpus_and_a_gpu(
        179700, 1, 0.2, 1e-9, 1, 1 << 18, [](double x) { return 1.15e-4 * x + 2e-5; },
        [](double x) { return 6.7e-7 * x + 4e-4; });
    s.x_init = s.workload / (32 * 16);
    return s;
}

// Saved models of `s` as a warm start sees them: every PU measured at sizes around its
// optimal share, its misses of spread `cpu_spread` (CPUs) or `gpu_spread` (GPU) laid out
// at the normal law's quantiles.
std::shared_ptr<PlbhacMemory> saved_models(const sim::Scenario &s, double cpu_spread, double gpu_spread)
{
    auto memory = std::make_shared<PlbhacMemory>();
    for (size_t i = 0; i < s.units.size(); ++i) {
        const bool gpu = s.units[i].unit_class == "gpu";
        const sim::SimulatedUnit unit(s.units[i]);
        PlbhacPuMemory m;
        m.worker = static_cast<int>(i);
        for (double x :
             gpu ? std::vector<double>{20000, 60000, 120000, 160000} : std::vector<double>{100, 300, 600, 900})
            m.exec.add(x, unit.exec_time(x));
        m.size_lo = m.exec.points().front().first;
        m.size_hi = m.exec.points().back().first;
        for (int k = 0; k < 16; ++k)
            m.misses.push_back((gpu ? gpu_spread : cpu_spread) * gsl_cdf_ugaussian_Pinv((k + 0.5) / 16));
        memory->pus.push_back(std::move(m));
    }
    return memory;
}

}  // namespace

TEST(PlbhacStraggleHedge, NoisyCpusGetLessOfTheFinalShareBesideASteadyGpu)
{
    const sim::Scenario s = noisy_cpus_beside_a_steady_gpu();
    const auto cpu_share = [&](bool hedge, double cpu_spread, unsigned *hedged, size_t gpu_misses = 16) {
        PlbhacOptions o;
        o.memory = saved_models(s, cpu_spread, 0.02);
        o.memory->pus.back().misses.resize(gpu_misses);
        o.hedge_straggle = hedge;
        PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
        EXPECT_TRUE(p.warm_started());
        uint64_t remaining = s.workload, cpus = 0;
        for (int w = 15; w >= 0; --w) {  // the GPU asks first: the one solve is the final one
            const uint64_t b = p.next_block(w, remaining);
            remaining -= b;
            cpus += w < 15 ? b : 0;
        }
        EXPECT_EQ(remaining, 0u) << "one step: everything shared out at once";
        *hedged = p.hedged_solves();
        return static_cast<double>(cpus) / static_cast<double>(s.workload);
    };
    unsigned hedged_off = 0, hedged_on = 0, hedged_steady = 0, hedged_unknown = 0;
    const double off = cpu_share(false, 0.2, &hedged_off);
    const double on = cpu_share(true, 0.2, &hedged_on);
    const double steady = cpu_share(true, 0.02, &hedged_steady);
    const double unknown = cpu_share(true, 0.2, &hedged_unknown, 1);
    std::printf("[ plan     ] the 15 CPUs' final share: %.1f%% as solved, %.1f%% hedged (20%% scatter), %.1f%% with "
                "2%% scatter\n",
                100 * off, 100 * on, 100 * steady);
    EXPECT_GT(off, 0.06) << "as solved, the CPUs get their worth (8% of the node)";
    EXPECT_LT(on, 0.75 * off) << "hedged, a 20%-scatter CPU's share is worth less than its straggle";
    EXPECT_EQ(hedged_off, 0u);
    EXPECT_EQ(hedged_on, 1u);
    // CPUs as steady as the GPU: nothing to win back, the plan stands as solved.
    EXPECT_EQ(hedged_steady, 0u);
    EXPECT_DOUBLE_EQ(steady, off);
    // The GPU's spread unknown (one miss): nothing to weigh the CPUs' against.
    EXPECT_EQ(hedged_unknown, 0u);
    EXPECT_DOUBLE_EQ(unknown, off);
}

TEST(PlbhacStraggleHedge, WarmRunsOfANoisyNodeEndEarlierHedged)
{
    // Runs 2-4 of the job, each from the models the previous one left (misses included),
    // 8 seeds: the hedged plans end earlier on average, since the job no longer waits for
    // the unluckiest of 15 noisy CPUs. Deterministic: seeded noise, planning time not charged.
    const sim::Scenario s = noisy_cpus_beside_a_steady_gpu();
    std::vector<sim::SimulatedUnit> units(s.units.begin(), s.units.end());
    const double optimum = sim::optimum_distribution(units, s.workload, s.granule).makespan_s;
    double warm[2] = {0, 0};
    unsigned hedged = 0, runs = 0;
    for (uint64_t seed = 1; seed <= 8; ++seed)
        for (int on : {0, 1}) {
            auto memory = std::make_shared<PlbhacMemory>();
            for (int run = 1; run <= 4; ++run) {
                PlbhacOptions o;
                o.x_init = s.x_init;
                o.memory = memory;
                o.hedge_straggle = on;
                PlbhacPlanner p(sim::planner_workers(s), sim::block_rules(s), o);
                const sim::SimResult r = sim::simulate(s, p, {seed * 100 + run, false});
                if (run >= 2) {
                    EXPECT_TRUE(p.warm_started());
                    warm[on] += r.makespan_s / optimum;
                    runs += on;
                    hedged += on ? (p.hedged_solves() > 0) : 0;
                }
            }
        }
    std::printf("[ sim      ] warm runs: x%.3f of the optimum as solved, x%.3f hedged (%u of %u runs hedged)\n",
                warm[0] / runs, warm[1] / runs, hedged, runs);
    EXPECT_LT(warm[1], 0.92 * warm[0]);
    EXPECT_GE(hedged, runs / 2);
}
