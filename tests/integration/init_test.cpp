// hetpu_init() policy resolution on a real StarPU node (1 CPU + 1 OpenCL worker via PoCL).
#include <hetpu/hetpu.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "tests/integration/add_one_codelet.h"

extern "C" {
struct starpu_sched_policy *starpu_get_sched_lib_policy(const char *name);
struct starpu_sched_policy **starpu_get_sched_lib_policies(void);
}

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
