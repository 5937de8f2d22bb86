// SPDX-License-Identifier: LGPL-2.1-or-later
// What makes `hetpu mgb-sim` a yardstick: every kernel of a job checked at placement, jobs
// pinned to devices too small for them kept out of the bound, the queue term computed in
// O(n log n) with the same value as the direct definition, and a number the JSON library
// refuses named by its field.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tools/mgb_sim/makespan_bound.h"
#include "tools/mgb_sim/scenario.h"
#include "tools/mgb_sim/simulator.h"

namespace {

using namespace hetpu::mgb_sim;

// A device of 4 SMs x 64 warps; shared memory per SM given (KiB).
std::string gpu(double gib, unsigned shared_kib)
{
    std::ostringstream o;
    o << R"({"name": "toy", "memory_gib": )" << gib << R"(, "sms": 4, "max_warps_per_sm": 64, )"
      << R"("max_blocks_per_sm": 32, "shared_mem_per_sm_kib": )" << shared_kib << "}";
    return o.str();
}

MgbScenario mix(const std::string &gpus, unsigned workers, const std::string &jobs)
{
    return parse_mgb_scenario(R"({"gpus": [)" + gpus + R"(], "workers": )" + std::to_string(workers) +
                              R"(, "interference": 0, "jobs": [)" + jobs + "]}");
}

}  // namespace

// The job's largest kernel (by warps) runs anywhere; its second needs 48 KiB of shared memory
// per block, which only device 1 has. Told only the largest kernel's shape, a policy put it
// on device 0, where the second kernel then ran with no warps, for free.
TEST(Yardstick, EveryKernelOfAJobIsCheckedAtPlacement)
{
    const std::string job = R"({"memory_gib": 1, "kernels": [
        {"blocks": 64, "threads_per_block": 256, "seconds": 5},
        {"blocks": 4, "threads_per_block": 32, "shared_mem_per_block": 49152, "seconds": 7}]})";
    const MgbScenario s = mix(gpu(16, 32) + ", " + gpu(16, 96), 1, job);
    for (Policy p : {Policy::Mgb, Policy::MgbExact, Policy::Sa, Policy::Cg}) {
        SimOptions o;
        o.policy = p;
        const SimResult r = simulate(s, o);
        ASSERT_EQ(r.job_records.size(), 1u);
        EXPECT_EQ(r.job_records[0].device, 1) << policy_name(p);
        EXPECT_TRUE(r.job_records[0].completed) << policy_name(p);
        EXPECT_DOUBLE_EQ(r.makespan_s, 12.0) << policy_name(p);
    }
}

// A job that no device can run all the kernels of is rejected, not run.
TEST(Yardstick, AJobNoDeviceCanRunIsRejected)
{
    const std::string job = R"({"memory_gib": 1, "kernels": [
        {"blocks": 4, "threads_per_block": 32, "shared_mem_per_block": 65536, "seconds": 7}]})";
    SimOptions o;
    const SimResult r = simulate(mix(gpu(16, 32), 1, job), o);
    EXPECT_EQ(r.jobs_rejected, 1u);
    EXPECT_EQ(r.jobs_completed, 0u);
}

// Pinned to device 0 (8 GiB) with 12 GiB: every policy rejects it, so it is in no term of the
// bound; the bound is the other job's alone.
TEST(Yardstick, APinnedJobTooLargeForItsDevicesIsNotInTheBound)
{
    const std::string small = R"({"memory_gib": 1, "kernels": [{"blocks": 4, "threads_per_block": 32, "seconds": 3}]})";
    const std::string pinned =
        R"({"memory_gib": 12, "devices": [0], "kernels": [{"blocks": 4, "threads_per_block": 32, "seconds": 100}]})";
    const MgbScenario s = mix(gpu(8, 32) + ", " + gpu(16, 32), 2, small + ", " + pinned);
    const BoundTerms b = makespan_lower_bound(s, 2, s.colocation, {}, {});
    EXPECT_EQ(b.jobs_counted, 1u);
    EXPECT_DOUBLE_EQ(b.bound_s, 3.0);
    SimOptions o;
    const SimResult r = simulate(s, o);
    EXPECT_EQ(r.jobs_rejected, 1u);
    EXPECT_GE(r.makespan_s, b.bound_s);
}

// The queue term against its definition, computed directly (job k starts no sooner than the
// (k - W + 1)-th smallest of the times before it), on random queues.
TEST(Yardstick, QueueTermMatchesItsDefinition)
{
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 40; ++trial) {
        const unsigned workers = 1 + unsigned(rng() % 5);
        const int n = 1 + int(rng() % 40);
        std::string jobs;
        std::vector<double> whole;
        for (int k = 0; k < n; ++k) {
            const double seconds = 1 + double(rng() % 1000) / 10;
            const double cpu = double(rng() % 50) / 10;
            whole.push_back(seconds + cpu);
            std::ostringstream o;
            o << (k ? ", " : "") << R"({"memory_gib": 1, "cpu_seconds": )" << cpu
              << R"(, "kernels": [{"blocks": 1, "threads_per_block": 32, "seconds": )" << seconds << "}]}";
            jobs += o.str();
        }
        double expected = 0;
        for (int k = 0; k < n; ++k) {
            double start = 0;
            if (k >= int(workers)) {
                std::vector<double> before(whole.begin(), whole.begin() + k);
                std::sort(before.begin(), before.end());
                start = before[size_t(k) - workers];
            }
            expected = std::max(expected, start + whole[size_t(k)]);
        }
        const BoundTerms b = makespan_lower_bound(mix(gpu(16, 32), workers, jobs), workers, Colocation::Mps, {}, {});
        EXPECT_NEAR(b.queue_s, expected, 1e-9 * expected) << "trial " << trial;
    }
}

TEST(Yardstick, ANumberPastADoubleIsNamedByItsField)
{
    try {
        mix(gpu(16, 32), 1,
            R"({"memory_gib": 1, "kernels": [{"blocks": 1, "threads_per_block": 32, "seconds": 1e400}]})");
        FAIL() << "1e400 accepted";
    } catch (const ScenarioError &e) {
        EXPECT_NE(std::string(e.what()).find("jobs[0].kernels[0].seconds"), std::string::npos) << e.what();
    }
}

// Arrivals: a worker waits for a job that has not arrived; turnaround counts from arrival; the
// bound moves with release times (a job arriving at 50 s ends no sooner than 50 s + its time).
TEST(Yardstick, JobsArriveOverTime)
{
    const std::string early =
        R"({"memory_gib": 1, "kernels": [{"blocks": 4, "threads_per_block": 32, "seconds": 10}]})";
    const std::string late =
        R"({"memory_gib": 1, "arrive_s": 50, "kernels": [{"blocks": 4, "threads_per_block": 32, "seconds": 10}]})";
    const MgbScenario s = mix(gpu(16, 32), 2, early + ", " + late);
    SimOptions o;
    const SimResult r = simulate(s, o);
    ASSERT_EQ(r.jobs_completed, 2u);
    EXPECT_DOUBLE_EQ(r.job_records[1].start_s, 50.0);
    EXPECT_DOUBLE_EQ(r.makespan_s, 60.0);
    EXPECT_DOUBLE_EQ(r.mean_turnaround_s, 10.0);
    EXPECT_DOUBLE_EQ(r.lower_bound_s, 60.0);
    EXPECT_THROW(mix(gpu(16, 32), 2, late + ", " + early), ScenarioError);  // not in arrival order
}

// Release times in the workers and queue terms: one worker, jobs arriving at 0, 5 and 6 with
// 10 s each. Queue: the third starts no sooner than the second-earliest end of the two before
// it (10 and 5 + 10), so it ends no sooner than 25 s. Workers: the two arriving from 5 s on
// need 20 s of the one worker after 5 s, and all three 30 s after 0: 30 s, the makespan.
TEST(Yardstick, BoundTermsUseReleaseTimes)
{
    auto at = [](double arrive) {
        return R"({"memory_gib": 1, "arrive_s": )" + std::to_string(arrive) +
               R"(, "kernels": [{"blocks": 4, "threads_per_block": 32, "seconds": 10}]})";
    };
    const MgbScenario s = mix(gpu(16, 32), 1, at(0) + ", " + at(5) + ", " + at(6));
    const BoundTerms b = makespan_lower_bound(s, 1, s.colocation, {}, {});
    EXPECT_DOUBLE_EQ(b.workers_s, 30.0);
    EXPECT_DOUBLE_EQ(b.queue_s, 25.0);
    EXPECT_DOUBLE_EQ(b.bound_s, 30.0);
    SimOptions o;
    EXPECT_DOUBLE_EQ(simulate(s, o).makespan_s, 30.0);
}
