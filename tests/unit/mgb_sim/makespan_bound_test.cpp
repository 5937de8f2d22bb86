// SPDX-License-Identifier: LGPL-2.1-or-later
// The makespan lower bound (makespan_bound.h): each term on a mix where it is the optimum,
// known by hand, and reached by the simulated mgb; and the bound never above any policy.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tools/mgb_sim/makespan_bound.h"
#include "tools/mgb_sim/scenario.h"
#include "tools/mgb_sim/simulator.h"

namespace {

using namespace hetpu::mgb_sim;

// A toy device: 4 SMs x 64 warps = 256 warps; memory given.
std::string gpu(double gib)
{
    std::ostringstream o;
    o << R"({"name": "toy", "memory_gib": )" << gib
      << R"(, "sms": 4, "max_warps_per_sm": 64, "max_blocks_per_sm": 32})";
    return o.str();
}

// Blocks of `threads` threads; the toy device holds 32 blocks and 64 warps per SM, so 128
// blocks of 64 threads fill it.
std::string job(double gib, unsigned blocks, double seconds, double cpu = 0, unsigned threads = 32)
{
    std::ostringstream o;
    o << R"({"memory_gib": )" << gib << R"(, "cpu_seconds": )" << cpu << R"(, "kernels": [{"blocks": )" << blocks
      << R"(, "threads_per_block": )" << threads << R"(, "seconds": )" << seconds << "}]}";
    return o.str();
}

MgbScenario mix(const std::string &gpus, unsigned workers, const std::string &jobs)
{
    return parse_mgb_scenario(R"({"gpus": [)" + gpus + R"(], "workers": )" + std::to_string(workers) +
                              R"(, "interference": 0, "jobs": [)" + jobs + "]}");
}

std::string times(int n, const std::string &one)
{
    std::string out;
    for (int i = 0; i < n; ++i)
        out += (i ? ", " : "") + one;
    return out;
}

double makespan(const MgbScenario &s, Policy p)
{
    SimOptions o;
    o.policy = p;
    return simulate(s, o).makespan_s;
}

}  // namespace

TEST(MakespanBound, LongestJobIsTightForOneJob)
{
    const MgbScenario s = mix(gpu(16), 4, job(1, 8, 10, 2) + ", " + job(1, 8, 3));
    const BoundTerms b = makespan_lower_bound(s, s.workers, s.colocation, {}, {});
    EXPECT_DOUBLE_EQ(b.longest_s, 12.0);
    EXPECT_DOUBLE_EQ(b.bound_s, 12.0);
    EXPECT_EQ(b.binding, "longest");
    EXPECT_DOUBLE_EQ(makespan(s, Policy::Mgb), 12.0);
}

// Four device-filling 10 s kernels on two devices: two each, side by side or not, 20 s.
TEST(MakespanBound, SmTimeIsTightForDeviceFillingKernels)
{
    const MgbScenario s = mix(gpu(16) + ", " + gpu(16), 4, times(4, job(1, 128, 10, 0, 64)));
    const BoundTerms b = makespan_lower_bound(s, s.workers, s.colocation, {}, {});
    EXPECT_DOUBLE_EQ(b.sm_s, 20.0);
    EXPECT_DOUBLE_EQ(b.bound_s, 20.0);
    EXPECT_EQ(b.binding, "sm");
    EXPECT_DOUBLE_EQ(makespan(s, Policy::Mgb), 20.0);
    EXPECT_DOUBLE_EQ(makespan(s, Policy::Sa), 20.0);
}

// Four jobs holding a whole device's memory with one-warp kernels: memory, not SMs, binds.
TEST(MakespanBound, MemoryTimeIsTightForDeviceFillingMemory)
{
    const MgbScenario s = mix(gpu(16) + ", " + gpu(16), 4, times(4, job(16, 1, 10)));
    const BoundTerms b = makespan_lower_bound(s, s.workers, s.colocation, {}, {});
    EXPECT_DOUBLE_EQ(b.memory_s, 20.0);
    EXPECT_NEAR(b.sm_s, 40.0 / 256 / 2, 1e-12);
    EXPECT_DOUBLE_EQ(b.bound_s, 20.0);
    EXPECT_DOUBLE_EQ(makespan(s, Policy::Mgb), 20.0);
}

// Quarter-device jobs: memory, not SMs, binds, and nothing else does.
TEST(MakespanBound, MemoryTimeIsTightForQuarterDeviceJobs)
{
    const MgbScenario s = mix(gpu(16), 8, times(8, job(4, 1, 10)));
    const BoundTerms b = makespan_lower_bound(s, s.workers, s.colocation, {}, {});
    EXPECT_DOUBLE_EQ(b.memory_s, 20.0);
    EXPECT_DOUBLE_EQ(b.exclusive_s, 0.0) << "no job holds more than half the device";
    EXPECT_EQ(b.binding, "memory");
    EXPECT_DOUBLE_EQ(makespan(s, Policy::Mgb), 20.0);
}

// Two 10 GiB jobs on a 16 GiB device never share it: 20 s, where bytes x time says 12.5 s.
TEST(MakespanBound, JobsOverHalfADeviceRunOneAfterTheOther)
{
    const MgbScenario s = mix(gpu(16), 2, times(2, job(10, 1, 10)));
    const BoundTerms b = makespan_lower_bound(s, s.workers, s.colocation, {}, {});
    EXPECT_DOUBLE_EQ(b.memory_s, 12.5);
    EXPECT_DOUBLE_EQ(b.exclusive_s, 20.0);
    EXPECT_EQ(b.binding, "exclusive");
    EXPECT_DOUBLE_EQ(makespan(s, Policy::Mgb), 20.0);
}

// A 7 GiB job does not fit beside a 10 GiB one on a 16 GiB device either, though it holds
// less than half of it: the two run one after the other, 20 s.
TEST(MakespanBound, JobsThatCannotShareADeviceRunOneAfterTheOther)
{
    const MgbScenario s = mix(gpu(16), 2, job(10, 1, 10) + ", " + job(7, 1, 10));
    const BoundTerms b = makespan_lower_bound(s, s.workers, s.colocation, {}, {});
    EXPECT_DOUBLE_EQ(b.exclusive_s, 20.0);
    EXPECT_EQ(b.binding, "exclusive");
    EXPECT_DOUBLE_EQ(makespan(s, Policy::Mgb), 20.0);
    // Two 7 GiB jobs fit together: nothing is exclusive.
    const MgbScenario t = mix(gpu(16), 2, times(2, job(7, 1, 10)));
    EXPECT_DOUBLE_EQ(makespan_lower_bound(t, t.workers, t.colocation, {}, {}).exclusive_s, 0.0);
}

// Time-sliced, a one-block kernel holds the whole device while it runs: four 10 s kernels on
// two devices take 20 s, where under MPS they run side by side in 10 s.
TEST(MakespanBound, TimeSlicedKernelsTakeTheWholeDevice)
{
    MgbScenario s = mix(gpu(16) + ", " + gpu(16), 4, times(4, job(1, 1, 10)));
    EXPECT_NEAR(makespan_lower_bound(s, s.workers, Colocation::Mps, {}, {}).sm_s, 40.0 / 256 / 2, 1e-12);
    const BoundTerms b = makespan_lower_bound(s, s.workers, Colocation::TimeSliced, {}, {});
    EXPECT_DOUBLE_EQ(b.sm_s, 20.0);
    EXPECT_EQ(b.binding, "sm");
    s.colocation = Colocation::TimeSliced;
    EXPECT_DOUBLE_EQ(makespan(s, Policy::Mgb), 20.0);
    EXPECT_DOUBLE_EQ(makespan(s, Policy::Sa), 20.0);
}

// Jobs that fit only the larger device are counted on it alone: 2 x 40 GiB x 10 s on one
// 40 GiB device is 20 s; over both devices' memory (56 GiB) it would be only 14.3 s.
TEST(MakespanBound, MemoryTimeCountsLargeJobsOnlyOnDevicesThatFitThem)
{
    const MgbScenario s = mix(gpu(16) + ", " + gpu(40), 4, times(2, job(40, 1, 10)));
    const BoundTerms b = makespan_lower_bound(s, s.workers, s.colocation, {}, {});
    EXPECT_DOUBLE_EQ(b.memory_s, 20.0);
    EXPECT_DOUBLE_EQ(b.bound_s, 20.0);
    EXPECT_DOUBLE_EQ(makespan(s, Policy::Mgb), 20.0);
}

// One worker, host-bound jobs: the worker pool binds.
TEST(MakespanBound, WorkersAreTightWhenTheHostBinds)
{
    const MgbScenario s = mix(gpu(16), 1, times(4, job(1, 1, 1, 9)));
    const BoundTerms b = makespan_lower_bound(s, s.workers, s.colocation, {}, {});
    EXPECT_DOUBLE_EQ(b.workers_s, 40.0);
    EXPECT_EQ(b.binding, "workers");
    EXPECT_DOUBLE_EQ(makespan(s, Policy::Mgb), 40.0);
}

// Two workers, the longest job last in the queue: it starts once the shorter of the two
// before it ends (1 s), so nothing ends before 11 s; the longest job alone says 10.
TEST(MakespanBound, QueueOrderIsTightWhenTheLongestJobComesLast)
{
    const MgbScenario s =
        mix(gpu(16), 2, job(1, 1, 0.5, 0.5) + ", " + job(1, 1, 0.5, 1.5) + ", " + job(1, 1, 0.5, 9.5));
    const BoundTerms b = makespan_lower_bound(s, s.workers, s.colocation, {}, {});
    EXPECT_DOUBLE_EQ(b.longest_s, 10.0);
    EXPECT_DOUBLE_EQ(b.queue_s, 11.0);
    EXPECT_EQ(b.binding, "queue");
    EXPECT_DOUBLE_EQ(makespan(s, Policy::Mgb), 11.0);
}

TEST(MakespanBound, JobsThatFitNoDeviceCountNowhere)
{
    const MgbScenario s = mix(gpu(16), 2, job(32, 1, 100) + ", " + job(1, 1, 5));
    const BoundTerms b = makespan_lower_bound(s, s.workers, s.colocation, {}, {});
    EXPECT_EQ(b.jobs_counted, 1u);
    EXPECT_DOUBLE_EQ(b.bound_s, 5.0);
}

// Never above what any policy achieves, under either co-location model, with noise.
TEST(MakespanBound, NeverAboveAnySimulatedPolicy)
{
    std::string jobs;
    for (int i = 0; i < 24; ++i)
        jobs += (i ? ", " : "") + job(1 + (i * 7) % 30, 1 + (i * 53) % 400, 2 + (i * 3) % 11, (i % 4) * 0.5);
    for (const char *model : {"mps", "time-sliced"}) {
        const MgbScenario s = parse_mgb_scenario(R"({"gpus": [)" + gpu(16) + ", " + gpu(16) + ", " + gpu(40) +
                                                 R"(], "workers": 8, "noise": 0.1, "colocation": ")" + model +
                                                 R"(", "jobs": [)" + jobs + "]}");
        for (Policy p : {Policy::Sa, Policy::Cg, Policy::Mgb, Policy::MgbExact, Policy::SchedGpu}) {
            SimOptions o;
            o.policy = p;
            o.seed = 7;
            const SimResult r = simulate(s, o);
            // A run that crashed or turned jobs away (schedgpu uses one device) ran another mix.
            if (r.jobs_crashed == 0 && r.jobs_rejected == 0) {
                EXPECT_GT(r.lower_bound_s, 0.0);
                EXPECT_LE(r.lower_bound_s, r.makespan_s * (1 + 1e-9)) << policy_name(p) << " " << model;
            }
        }
    }
}
