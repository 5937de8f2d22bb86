// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu_init() policy resolution on a real StarPU node (1 CPU + 1 OpenCL worker via PoCL).
#include <hetpu/hetpu.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/start/starpu_compat.h"
#include "tests/integration/add_one_codelet.h"

namespace {

class HetpuInit : public ::testing::Test {
protected:
    void SetUp() override
    {
        unsetenv("STARPU_SCHED");
        unsetenv("HETPU_VERBOSE");
    }
    void TearDown() override
    {
        hetpu_shutdown();
        unsetenv("STARPU_SCHED");
        unsetenv("HETPU_VERBOSE");
    }
};

// Runs one task on every worker type present, proving the policy actually schedules.
void run_a_task_per_worker()
{
    float y[16] = {};
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(y), 16, sizeof(float));
    add_one_codelet_load();
    const unsigned nworkers = starpu_worker_get_count();
    for (unsigned w = 0; w < nworkers; ++w) {
        struct starpu_task *t = starpu_task_create();
        t->cl = &add_one_codelet;
        t->handles[0] = h;
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    starpu_task_wait_for_all();
    starpu_data_unregister(h);
    add_one_codelet_unload();
    for (float v : y)
        EXPECT_EQ(v, static_cast<float>(nworkers));
}

}  // namespace

TEST_F(HetpuInit, HetpuPolicyFromStarpuSchedIsTheOneRunning)
{
    setenv("STARPU_SCHED", "greedy", 1);
    ASSERT_EQ(hetpu_init(nullptr), 0);
    EXPECT_STREQ(hetpu_policy_name(), "greedy");
    EXPECT_TRUE(hetpu_policy_is_hetpu());
    ASSERT_NE(std::getenv("STARPU_SCHED"), nullptr) << "the user's environment is restored after init";
    EXPECT_STREQ(std::getenv("STARPU_SCHED"), "greedy");
    EXPECT_EQ(starpu_cpu_worker_get_count(), 1u);
    EXPECT_EQ(starpu_opencl_worker_get_count(), 1u) << "the test node is 1 CPU + 1 OpenCL (PoCL) worker";
    run_a_task_per_worker();
}

TEST_F(HetpuInit, StarpuSchedBeatsConfName)
{
    setenv("STARPU_SCHED", "eager", 1);
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.sched_policy_name = "dmda";
    ASSERT_EQ(hetpu_init(&conf), 0);
    EXPECT_STREQ(hetpu_policy_name(), "eager");
    EXPECT_FALSE(hetpu_policy_is_hetpu());
}

TEST_F(HetpuInit, ConfNameMayNameAHetpuPolicy)
{
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.sched_policy_name = "greedy";  // StarPU alone would not know this name
    ASSERT_EQ(hetpu_init(&conf), 0);
    EXPECT_STREQ(hetpu_policy_name(), "greedy");
    EXPECT_TRUE(hetpu_policy_is_hetpu());
}

TEST_F(HetpuInit, NoNameMeansStarpusDefault)
{
    ASSERT_EQ(hetpu_init(nullptr), 0);
    ASSERT_NE(hetpu_policy_name(), nullptr);
    bool builtin = false;
    for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); *p; ++p)
        builtin |= std::string((*p)->policy_name) == hetpu_policy_name();
    EXPECT_TRUE(builtin) << hetpu_policy_name();
    EXPECT_FALSE(hetpu_policy_is_hetpu());
}

TEST_F(HetpuInit, UnknownNameIsAnErrorListingValidNames)
{
    setenv("STARPU_SCHED", "nonexistent", 1);
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(hetpu_init(nullptr), -EINVAL);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(hetpu_policy_name(), nullptr);
    EXPECT_NE(err.find("unknown scheduling policy 'nonexistent'"), std::string::npos) << err;
    EXPECT_NE(err.find("greedy"), std::string::npos);
    EXPECT_NE(err.find("dmda"), std::string::npos);
    // StarPU was not started: a correct init still works afterwards.
    setenv("STARPU_SCHED", "greedy", 1);
    EXPECT_EQ(hetpu_init(nullptr), 0);
}

TEST_F(HetpuInit, HelpListsPoliciesWithoutStartingStarpu)
{
    setenv("STARPU_SCHED", "help", 1);
    ::testing::internal::CaptureStdout();
    EXPECT_EQ(hetpu_init(nullptr), HETPU_INIT_HELP_SHOWN);
    std::string out = ::testing::internal::GetCapturedStdout();
    EXPECT_NE(out.find("greedy"), std::string::npos);
    EXPECT_NE(out.find("data-aware performance model"), std::string::npos);
    EXPECT_EQ(hetpu_policy_name(), nullptr);
}

TEST_F(HetpuInit, SecondInitIsRefused)
{
    ASSERT_EQ(hetpu_init(nullptr), 0);
    EXPECT_EQ(hetpu_init(nullptr), -EALREADY);
}

// Five threads call hetpu_init() at the same instant, 100 rounds: exactly one starts
// StarPU, the others are refused, and the policy running is the one named. Before the
// start-up held its lock throughout, a second caller could slip past the "started" test,
// reset the conf StarPU was reading and resolve an empty STARPU_SCHED (hidden by the first).
TEST_F(HetpuInit, ConcurrentInitStartsTheNamedPolicyOnce)
{
    setenv("STARPU_SCHED", "greedy", 1);
    // The race is in hetpu's start-up: CPU workers alone start faster. Restored on any exit.
    const char *nopencl = std::getenv("STARPU_NOPENCL");
    std::shared_ptr<void> restore(nullptr, [saved = std::string(nopencl ? nopencl : "")](void *) {
        if (saved.empty())
            unsetenv("STARPU_NOPENCL");
        else
            setenv("STARPU_NOPENCL", saved.c_str(), 1);
    });
    setenv("STARPU_NOPENCL", "0", 1);
    constexpr int threads = 5, rounds = 100;
    int named = 0;
    for (int round = 0; round < rounds; ++round) {
        std::atomic<int> waiting{threads};
        std::vector<int> results(threads, 1);
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                // Spin until all are ready, so the calls overlap as much as the machine allows.
                for (--waiting; waiting.load() > 0;)
                    std::this_thread::yield();
                results[t] = hetpu_init(nullptr);
            });
        for (auto &th : pool)
            th.join();
        ASSERT_EQ(std::count(results.begin(), results.end(), 0), 1) << "round " << round;
        ASSERT_EQ(std::count(results.begin(), results.end(), -EALREADY), threads - 1) << "round " << round;
        ASSERT_NE(hetpu_policy_name(), nullptr);
        named += std::string(hetpu_policy_name()) == "greedy";
        struct starpu_sched_policy *running = starpu_sched_ctx_get_sched_policy(0);
        ASSERT_NE(running, nullptr);
        EXPECT_STREQ(running->policy_name, "greedy") << "round " << round;
        hetpu_shutdown();
        ASSERT_EQ(hetpu_policy_name(), nullptr) << "one hetpu_shutdown() stops what one hetpu_init() started";
    }
    EXPECT_EQ(named, rounds);
}

TEST_F(HetpuInit, VerboseNamesPolicyAndWorkers)
{
    setenv("STARPU_SCHED", "greedy", 1);
    setenv("HETPU_VERBOSE", "1", 1);
    ::testing::internal::CaptureStderr();
    ASSERT_EQ(hetpu_init(nullptr), 0);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("hetpu: policy greedy on 1 CPU + 1 OpenCL worker"), std::string::npos) << err;
}

TEST(SchedLibExports, ListAndLookupHetpuPolicies)
{
    struct starpu_sched_policy *greedy = starpu_get_sched_lib_policy("greedy");
    ASSERT_NE(greedy, nullptr);
    EXPECT_STREQ(greedy->policy_name, "greedy");
    EXPECT_EQ(starpu_get_sched_lib_policy("dmda"), nullptr) << "only hetpu's own policies are exported";
    EXPECT_EQ(starpu_get_sched_lib_policy(nullptr), nullptr);
    bool found = false;
    struct starpu_sched_policy **list = starpu_get_sched_lib_policies();
    for (int i = 0; list[i]; ++i)
        found |= list[i] == greedy;
    EXPECT_TRUE(found);
}
