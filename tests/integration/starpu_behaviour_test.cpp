// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU behaviour hetpu relies on, pinned against the StarPU it is built with (Debian's
// 1.3.10 in ./run check, 1.4.10 with CUDA in ./run cuda-check). A StarPU release that changes
// one of these fails here, naming what hetpu assumed, instead of showing up later as a wrong
// schedule or a hang. StarPU is started directly (starpu_init), not through hetpu_init.
#include <starpu.h>

#include <gtest/gtest.h>

#include "tests/integration/scoped_env.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "runtime/start/starpu_compat.h"

namespace {

constexpr starpu_ssize_t kMiB = 1024 * 1024;

// The suite's node sets these (tests/local.mk); each test sets what it pins and restores.
using hetpu_test::ScopedEnv;

// Memory of the first OpenCL worker's node as StarPU accounts it, or -1 without one.
starpu_ssize_t opencl_memory_total()
{
    int worker = -1;
    if (starpu_worker_get_ids_by_type(STARPU_OPENCL_WORKER, &worker, 1) < 1)
        return -1;
    return starpu_memory_get_total(starpu_worker_get_memory_node(worker));
}

std::string running_policy_name()
{
    const struct starpu_sched_policy *p = starpu_sched_ctx_get_sched_policy(HETPU_STARPU_INITIAL_SCHED_CTX);
    return p && p->policy_name ? p->policy_name : "";
}

}  // namespace

// mgb sizes its device ledgers from StarPU's accounting, and docs/mgb.md tells users to set
// only the per-device variables for unequal limits: the global one wins when both are set.
TEST(StarpuBehaviour, GlobalDeviceMemoryLimitWinsOverPerDevice)
{
    ScopedEnv per_device("STARPU_LIMIT_OPENCL_0_MEM", "8");
    {
        ScopedEnv global("STARPU_LIMIT_OPENCL_MEM", "64");
        ASSERT_EQ(starpu_init(nullptr), 0);
        const starpu_ssize_t total = opencl_memory_total();
        starpu_shutdown();
        if (total < 0)
            GTEST_SKIP() << "this StarPU started no OpenCL worker (no OpenCL platform): no device limit to read";
        EXPECT_EQ(total, 64 * kMiB) << "STARPU_LIMIT_OPENCL_MEM should win over STARPU_LIMIT_OPENCL_0_MEM";
    }
    ScopedEnv global("STARPU_LIMIT_OPENCL_MEM", nullptr);
    ASSERT_EQ(starpu_init(nullptr), 0);
    EXPECT_EQ(opencl_memory_total(), 8 * kMiB) << "without the global limit the per-device one applies";
    starpu_shutdown();
}

// WorkersPausedForSubmission (runtime/divisible/workers_paused.h): a paused worker starts no new task
// until starpu_resume, so blocks submitted while paused start together.
TEST(StarpuBehaviour, PausedWorkersStartNoTaskUntilResumed)
{
    ASSERT_EQ(starpu_init(nullptr), 0);
    static std::atomic<int> ran{0};
    ran = 0;
    static struct starpu_codelet cl = [] {
        struct starpu_codelet c;
        starpu_codelet_init(&c);
        c.cpu_funcs[0] = [](void **, void *) { ran++; };
        c.nbuffers = 0;
        c.name = "hetpu_test_pause";
        return c;
    }();
    starpu_pause();
    for (int i = 0; i < 4; ++i)
        ASSERT_EQ(starpu_task_insert(&cl, 0), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(ran.load(), 0) << "a task started while the workers were paused";
    starpu_resume();
    starpu_task_wait_for_all();
    EXPECT_EQ(ran.load(), 4);
    starpu_shutdown();
}

// hetpu_init resolves STARPU_SCHED itself and hides it from StarPU (runtime/start/init.cpp),
// because a name StarPU knows beats conf.sched_policy, and an unknown one falls back to it.
// The running context holds a copy of the policy: hetpu reads its name, never its address.
TEST(StarpuBehaviour, PolicySelectionByConfAndEnvironment)
{
    struct starpu_sched_policy *greedy = starpu_get_sched_lib_policy("greedy");
    ASSERT_NE(greedy, nullptr);
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.sched_policy = greedy;
    {
        ScopedEnv sched("STARPU_SCHED", nullptr);
        ASSERT_EQ(starpu_init(&conf), 0);
        EXPECT_EQ(running_policy_name(), "greedy");
        EXPECT_NE(starpu_sched_ctx_get_sched_policy(HETPU_STARPU_INITIAL_SCHED_CTX), greedy)
            << "StarPU now runs the policy struct itself, not a copy";
        starpu_shutdown();
    }
    {
        ScopedEnv sched("STARPU_SCHED", "eager");
        ASSERT_EQ(starpu_init(&conf), 0);
        EXPECT_EQ(running_policy_name(), "eager") << "a known STARPU_SCHED should beat conf.sched_policy";
        starpu_shutdown();
    }
    {
        ScopedEnv sched("STARPU_SCHED", "no-such-policy-hetpu-test");
        ASSERT_EQ(starpu_init(&conf), 0);
        EXPECT_EQ(running_policy_name(), "greedy") << "an unknown STARPU_SCHED should fall back to conf.sched_policy";
        starpu_shutdown();
    }
}
