// SPDX-License-Identifier: LGPL-2.1-or-later
// The job-mix simulator on hand-checked tiny scenarios, plus invariants on a larger mix:
// determinism per seed, CG's overcommit crashes, the memory-aware policies never crash.
#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>

#include "tools/mgb_sim/scenario.h"
#include "tools/mgb_sim/simulator.h"

namespace {

using namespace hetpu::mgb_sim;

// A toy device: 4 SMs x 64 warps = 256 warps, 16 GiB.
const char *kToyGpu = R"({"name": "toy", "memory_gib": 16, "sms": 4, "max_warps_per_sm": 64, "max_blocks_per_sm": 32})";

std::string job(double gib, unsigned blocks, unsigned threads, double seconds, double cpu = 0)
{
    std::ostringstream o;
    o << R"({"memory_gib": )" << gib << R"(, "cpu_seconds": )" << cpu << R"(, "kernels": [{"blocks": )" << blocks
      << R"(, "threads_per_block": )" << threads << R"(, "seconds": )" << seconds << "}]}";
    return o.str();
}

MgbScenario scenario(unsigned gpus, unsigned workers, const std::string &jobs, double interference = 0)
{
    std::string g;
    for (unsigned i = 0; i < gpus; ++i)
        g += (i ? ", " : "") + std::string(kToyGpu);
    std::ostringstream o;
    o << R"({"gpus": [)" << g << R"(], "workers": )" << workers << R"(, "interference": )" << interference
      << R"(, "jobs": [)" << jobs << "]}";
    return parse_mgb_scenario(o.str());
}

SimResult run(const MgbScenario &s, Policy p, unsigned cg_ratio = 0, uint64_t seed = 1)
{
    SimOptions o;
    o.policy = p;
    o.cg_ratio = cg_ratio;
    o.seed = seed;
    return simulate(s, o);
}

// Two 4 GiB jobs whose 4-warp kernels fit together: MGB runs them side by side, SA one
// after the other.
TEST(MgbSim, TwoJobsThatFitFinishTogetherUnderMgbAndInSequenceUnderSa)
{
    const MgbScenario s = scenario(1, 2, job(4, 4, 32, 10) + ", " + job(4, 4, 32, 10));
    const SimResult mgb = run(s, Policy::Mgb);
    EXPECT_EQ(mgb.jobs_completed, 2u);
    EXPECT_DOUBLE_EQ(mgb.job_records[0].end_s, 10.0);
    EXPECT_DOUBLE_EQ(mgb.job_records[1].end_s, 10.0);
    EXPECT_DOUBLE_EQ(mgb.makespan_s, 10.0);
    EXPECT_EQ(mgb.gpus[0].peak_jobs, 2u);
    EXPECT_EQ(mgb.gpus[0].peak_allocated_bytes, 8ull << 30);

    const SimResult sa = run(s, Policy::Sa);
    EXPECT_EQ(sa.jobs_completed, 2u);
    EXPECT_DOUBLE_EQ(sa.job_records[0].end_s, 10.0);
    EXPECT_DOUBLE_EQ(sa.job_records[1].end_s, 20.0);
    EXPECT_DOUBLE_EQ(sa.job_records[1].gpu_wait_s, 10.0);
    EXPECT_DOUBLE_EQ(sa.makespan_s, 20.0);
    EXPECT_DOUBLE_EQ(sa.mean_turnaround_s, 15.0);
    EXPECT_DOUBLE_EQ(sa.mean_kernel_slowdown_pct, 0.0);
}

// Host work overlaps: SA keeps a device idle during a job's cpu_seconds, MGB's extra workers
// do that work while another job's kernel runs.
TEST(MgbSim, HostWorkOverlapsUnderMgb)
{
    const MgbScenario s = scenario(1, 2, job(4, 4, 32, 10, 5) + ", " + job(4, 4, 32, 10, 5));
    SimOptions sa;
    sa.policy = Policy::Sa;
    sa.workers = 1;  // the paper's SA: as many workers as devices
    EXPECT_DOUBLE_EQ(simulate(s, sa).makespan_s, 30.0);
    EXPECT_DOUBLE_EQ(run(s, Policy::Mgb).makespan_s, 15.0);
}

// Kernels that each fill the device: Alg. 2 holds the second job back (compute is a hard
// constraint), Alg. 3 co-locates them and the SMs are shared: no free lunch either way.
TEST(MgbSim, SaturatingKernelsShareTheDevice)
{
    // 256 threads = 8 warps per block; 8 blocks per SM fill its 64 warps: one wave is 32 blocks.
    const MgbScenario s = scenario(1, 2, job(2, 1000, 256, 10) + ", " + job(2, 1000, 256, 10));
    const SimResult exact = run(s, Policy::MgbExact);
    EXPECT_DOUBLE_EQ(exact.job_records[0].end_s, 10.0);
    EXPECT_DOUBLE_EQ(exact.job_records[1].end_s, 20.0);
    const SimResult mgb = run(s, Policy::Mgb);
    EXPECT_DOUBLE_EQ(mgb.job_records[0].end_s, 20.0);
    EXPECT_DOUBLE_EQ(mgb.job_records[1].end_s, 20.0);
    EXPECT_NEAR(mgb.mean_kernel_slowdown_pct, 100.0, 1e-9);
}

// The calibrated part of the model: co-located kernels that fit slow each other by
// interference x (the others' share of the device).
TEST(MgbSim, InterferenceWhenNotOversubscribed)
{
    const MgbScenario s = scenario(1, 2, job(4, 64, 32, 10) + ", " + job(4, 64, 32, 10), 0.05);
    const SimResult r = run(s, Policy::Mgb);
    const double expected_pct = 100.0 * 0.05 * 64.0 / 256.0;  // the other kernel holds 64 of 256 warps
    EXPECT_NEAR(r.mean_kernel_slowdown_pct, expected_pct, 1e-9);
    EXPECT_NEAR(r.makespan_s, 10.0 * (1 + 0.05 * 0.25), 1e-9);
}

TEST(MgbSim, CgOvercommitCrashesMgbWaits)
{
    const MgbScenario s = scenario(1, 2, job(10, 4, 32, 10) + ", " + job(10, 4, 32, 10));
    const SimResult cg = run(s, Policy::Cg, 2);
    EXPECT_EQ(cg.cg_ratio, 2u);
    EXPECT_EQ(cg.jobs_completed, 1u);
    EXPECT_EQ(cg.jobs_crashed, 1u);
    EXPECT_TRUE(cg.job_records[1].crashed);
    EXPECT_DOUBLE_EQ(cg.job_records[1].end_s, 0.0);          // the allocation fails at once
    EXPECT_EQ(cg.gpus[0].peak_reserved_bytes, 20ull << 30);  // the Ledger granted past capacity
    EXPECT_EQ(cg.gpus[0].peak_allocated_bytes, 10ull << 30);

    for (Policy p : {Policy::Mgb, Policy::MgbExact}) {
        const SimResult r = run(s, p);
        EXPECT_EQ(r.jobs_crashed, 0u) << policy_name(p);
        EXPECT_EQ(r.jobs_completed, 2u) << policy_name(p);
        EXPECT_DOUBLE_EQ(r.makespan_s, 20.0) << policy_name(p);
    }
}

TEST(MgbSim, JobLargerThanEveryDevice)
{
    const MgbScenario s = scenario(2, 2, job(20, 4, 32, 10) + ", " + job(4, 4, 32, 10));
    const SimResult mgb = run(s, Policy::Mgb);
    EXPECT_TRUE(mgb.job_records[0].rejected);
    EXPECT_EQ(mgb.jobs_crashed, 0u);
    EXPECT_EQ(mgb.jobs_completed, 1u);
    // SA and CG skip devices a job can never fit, as their StarPU policies do: rejected too.
    for (Policy p : {Policy::Sa, Policy::Cg}) {
        const SimResult r = run(s, p);
        EXPECT_TRUE(r.job_records[0].rejected) << policy_name(p);
        EXPECT_EQ(r.jobs_crashed, 0u) << policy_name(p);
    }
}

TEST(MgbSim, SchedGpuUsesOneDeviceMgbSpreads)
{
    std::string jobs;
    for (int i = 0; i < 4; ++i)
        jobs += (i ? ", " : "") + job(1, 1000, 256, 10);
    const MgbScenario s = scenario(4, 4, jobs);
    const SimResult sched = run(s, Policy::SchedGpu);
    EXPECT_EQ(sched.gpus[0].jobs, 4u);
    EXPECT_EQ(sched.gpus[1].jobs + sched.gpus[2].jobs + sched.gpus[3].jobs, 0u);
    EXPECT_DOUBLE_EQ(sched.makespan_s, 40.0);  // four device-filling kernels share one device
    const SimResult mgb = run(s, Policy::Mgb);
    for (const GpuRecord &g : mgb.gpus)
        EXPECT_EQ(g.jobs, 1u);
    EXPECT_DOUBLE_EQ(mgb.makespan_s, 10.0);
}

// A random mix like the paper's (1-13 GiB jobs, V100s, many workers).
MgbScenario random_mix(uint64_t seed, double noise)
{
    std::mt19937_64 rng(seed);
    std::ostringstream jobs;
    for (int i = 0; i < 32; ++i) {
        const double gib = 1 + double(rng() % 1200) / 100.0;
        const unsigned blocks = 1 + unsigned(rng() % 5000);
        const unsigned threads = 32u << (rng() % 5);
        jobs << (i ? ", " : "") << R"({"memory_gib": )" << gib << R"(, "cpu_seconds": )" << double(rng() % 100) / 10
             << R"(, "kernels": [{"blocks": )" << blocks << R"(, "threads_per_block": )" << threads
             << R"(, "seconds": )" << 0.5 + double(rng() % 100) / 20 << R"(, "host_seconds": 0.3, "repeat": )"
             << 1 + rng() % 20 << "}]}";
    }
    return parse_mgb_scenario(R"({"gpus": [{"preset": "V100", "count": 4}], "workers": 16, "noise": )" +
                              std::to_string(noise) + R"(, "jobs": [)" + jobs.str() + "]}");
}

TEST(MgbSim, DeterministicPerSeed)
{
    const MgbScenario s = random_mix(7, 0.1);
    for (Policy p : {Policy::Sa, Policy::Cg, Policy::Mgb, Policy::MgbExact}) {
        const SimResult a = run(s, p, 0, 42), b = run(s, p, 0, 42), c = run(s, p, 0, 43);
        EXPECT_EQ(a.makespan_s, b.makespan_s) << policy_name(p);
        EXPECT_EQ(a.events, b.events) << policy_name(p);
        for (size_t j = 0; j < a.job_records.size(); ++j) {
            EXPECT_EQ(a.job_records[j].end_s, b.job_records[j].end_s);
            EXPECT_EQ(a.job_records[j].device, b.job_records[j].device);
        }
        EXPECT_NE(a.makespan_s, c.makespan_s) << policy_name(p) << ": the seed draws the noise";
    }
}

TEST(MgbSim, MemoryAwarePoliciesNeverCrashCgDoes)
{
    unsigned cg_crashes = 0;
    for (uint64_t seed = 1; seed <= 5; ++seed) {
        const MgbScenario s = random_mix(seed, 0.05);
        for (Policy p : {Policy::Mgb, Policy::MgbExact}) {
            const SimResult r = run(s, p, 0, seed);
            EXPECT_EQ(r.jobs_crashed, 0u) << policy_name(p) << " seed " << seed;
            EXPECT_EQ(r.jobs_completed, r.jobs) << policy_name(p) << " seed " << seed;
            for (size_t d = 0; d < r.gpus.size(); ++d)
                EXPECT_LE(r.gpus[d].peak_reserved_bytes, s.gpus[d].memory_bytes);
        }
        const SimResult sa = run(s, Policy::Sa, 0, seed);
        EXPECT_EQ(sa.jobs_crashed, 0u);  // every job fits a device alone
        cg_crashes += run(s, Policy::Cg, 4, seed).jobs_crashed;
    }
    EXPECT_GT(cg_crashes, 0u);  // four 1-13 GiB jobs per 16 GiB device overcommit
}

}  // namespace

// An H100 beside a 20-SM GPU of equal memory, 24 identical
// device-filling jobs. Absolute warps sent most of them to the small GPU (210 s against
// 120 s); as a share of each device, mgb does as well as sa.
TEST(MgbSim, UnequalDevicesAreBalancedByShare)
{
    const std::string small =
        R"({"name": "small", "memory_gib": 80, "sms": 20, "max_warps_per_sm": 64, "max_blocks_per_sm": 32})";
    std::string jobs;
    for (int i = 0; i < 24; ++i)
        jobs += std::string(i ? ", " : "") +
                R"({"memory_gib": 10, "kernels": [{"blocks": 100000, "threads_per_block": 1024, "seconds": 10}]})";
    const MgbScenario s = parse_mgb_scenario(R"({"gpus": [{"preset": "H100"}, )" + small +
                                             R"(], "workers": 24, "interference": 0, "jobs": [)" + jobs + "]}");
    const SimResult mgb = run(s, Policy::Mgb);
    const SimResult sa = run(s, Policy::Sa);
    EXPECT_EQ(mgb.gpus[0].jobs, 12u);
    EXPECT_EQ(mgb.gpus[1].jobs, 12u);
    EXPECT_LE(mgb.makespan_s, sa.makespan_s);
}

// Simulated sa and cg skip a device the job can never fit, as the
// StarPU policies do: a 30 GiB job is never sent to a 16 GiB device (it used to crash there).
TEST(MgbSim, BaselinesNeverSendAJobToADeviceTooSmallForIt)
{
    std::string jobs;
    for (int i = 0; i < 6; ++i)
        jobs += std::string(i ? ", " : "") + job(30, 4, 32, 10) + ", " + job(4, 4, 32, 10);
    const MgbScenario s = parse_mgb_scenario(R"({"gpus": [{"preset": "V100"}, {"preset": "A100"}], "workers": 4, )"
                                             R"("jobs": [)" +
                                             jobs + "]}");
    for (Policy p : {Policy::Sa, Policy::Cg}) {
        const SimResult r = run(s, p);
        unsigned large_on_v100 = 0;
        for (size_t j = 0; j < r.job_records.size(); ++j)
            large_on_v100 += s.jobs[j].memory_bytes > s.gpus[0].memory_bytes && r.job_records[j].device == 0;
        EXPECT_EQ(large_on_v100, 0u) << policy_name(p);
    }
}

// The two co-location models: two 4-warp kernels side by side take 10 s with concurrent
// kernels (MPS) and 20 s time-sliced (each runs half the time).
TEST(MgbSim, TimeSlicedColocationSharesTheDeviceByTurns)
{
    MgbScenario s = scenario(1, 2, job(4, 4, 32, 10) + ", " + job(4, 4, 32, 10));
    EXPECT_DOUBLE_EQ(run(s, Policy::Mgb).makespan_s, 10.0);
    s.colocation = Colocation::TimeSliced;
    const SimResult r = run(s, Policy::Mgb);
    EXPECT_DOUBLE_EQ(r.makespan_s, 20.0);
    EXPECT_EQ(r.colocation, "time-sliced");
}

// Time-sliced, mgb-exact's first fit would stack two kernel-bound jobs on device 0 (each then
// runs half the time: 20 s) while device 1 idles; the placement spreads them (10 s).
TEST(MgbSim, TimeSlicedPlacementSpreadsKernelBoundJobs)
{
    MgbScenario s = scenario(2, 2, job(4, 4, 32, 10) + ", " + job(4, 4, 32, 10));
    for (Policy p : {Policy::Mgb, Policy::MgbExact}) {
        s.colocation = Colocation::Mps;
        if (p == Policy::MgbExact) {
            EXPECT_EQ(run(s, p).job_records[1].device, 0) << "first fit, MPS";
        }
        s.colocation = Colocation::TimeSliced;
        const SimResult r = run(s, p);
        EXPECT_NE(r.job_records[0].device, r.job_records[1].device) << policy_name(p);
        EXPECT_DOUBLE_EQ(r.makespan_s, 10.0) << policy_name(p);
    }
}

// Time-sliced, two jobs whose kernels run a quarter of the time they hold the device share
// one: the second fills the first's host phases (less than the 2 x 40 s one after the
// other), while a third, kernel-bound, waits for a free device rather than take turns.
TEST(MgbSim, TimeSlicedPlacementFillsHostPhases)
{
    const std::string host_heavy = R"({"memory_gib": 1, "kernels": [{"blocks": 4, "threads_per_block": 32,)"
                                   R"( "seconds": 1, "host_seconds": 3, "repeat": 10}]})";
    MgbScenario s = scenario(1, 2, host_heavy + ", " + host_heavy);
    s.colocation = Colocation::TimeSliced;
    const SimResult r = run(s, Policy::Mgb);
    EXPECT_EQ(r.job_records[1].granted_s, 0.0) << "it shares the device at once";
    EXPECT_LT(r.makespan_s, 60.0);

    MgbScenario t = scenario(1, 2, host_heavy + ", " + job(1, 4, 32, 10));
    t.colocation = Colocation::TimeSliced;
    const SimResult u = run(t, Policy::Mgb);
    EXPECT_DOUBLE_EQ(u.job_records[1].granted_s, u.job_records[0].end_s) << "250 + 1000 of the time: it waits";
}

// A job pinned to devices ("devices") runs only there: bench/mgb/small_exact.py tries every
// pinning of a small mix to find a schedule the node can run.
TEST(MgbSim, PinnedJobsRunOnlyOnTheirDevices)
{
    const std::string pinned = R"({"memory_gib": 1, "devices": [1], "kernels": [{"blocks": 4, "threads_per_block": 32,)"
                               R"( "seconds": 10}]})";
    const MgbScenario s = scenario(2, 2, pinned + ", " + pinned);
    const SimResult r = run(s, Policy::Mgb);
    EXPECT_EQ(r.job_records[0].device, 1);
    EXPECT_EQ(r.job_records[1].device, 1);
    EXPECT_EQ(r.gpus[0].jobs, 0u);
    EXPECT_THROW(scenario(2, 1,
                          R"({"memory_gib": 1, "devices": [2], "kernels": [{"blocks": 1, "threads_per_block": 32,)"
                          R"( "seconds": 1}]})"),
                 ScenarioError);
}
