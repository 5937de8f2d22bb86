// SPDX-License-Identifier: LGPL-2.1-or-later
// The accounting hook on a real StarPU node (1 CPU + 1 OpenCL worker via PoCL): the wrapped
// policy's own exec hooks still run once per task, every task is counted, busy time is
// positive, and HETPU_ACCOUNTING=0 leaves the policy alone and the ledger empty.
#include <hetpu/hetpu.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include "accounting_hook/core/ledger.h"

namespace {

namespace fs = std::filesystem;
using hetpu::accounting::JobRecord;
using hetpu::accounting::Ledger;

std::atomic<int> g_pre{0}, g_post{0};
std::atomic<long long> g_profiled_ns{0};

// A slow callback: StarPU (1.3, 1.4) calls post_exec_hook before the callback, so neither
// the profiling times nor the hook's own stamps may count it.
void slow_callback(void *arg)
{
    struct starpu_task *t = static_cast<struct starpu_task *>(arg);
    if (const struct starpu_profiling_task_info *info = t->profiling_info)
        g_profiled_ns += (info->end_time.tv_sec - info->start_time.tv_sec) * 1000000000LL +
                         (info->end_time.tv_nsec - info->start_time.tv_nsec);
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, nullptr);
}
void counting_pre(struct starpu_task *, unsigned) { g_pre++; }
void counting_post(struct starpu_task *, unsigned) { g_post++; }

// StarPU's eager policy with exec hooks that count: stands for any policy with hooks of its own.
struct starpu_sched_policy counting_eager()
{
    struct starpu_sched_policy **all = starpu_sched_get_predefined_policies();
    for (; *all; ++all)
        if (!std::strcmp((*all)->policy_name, "eager")) {
            struct starpu_sched_policy p = **all;
            p.pre_exec_hook = counting_pre;
            p.post_exec_hook = counting_post;
            return p;
        }
    ADD_FAILURE() << "StarPU has no eager policy";
    return {};
}

void spin(void *buffers[], void *arg)
{
    (void)buffers;
    (void)arg;
    volatile double x = 0;
    for (int i = 0; i < 20000; ++i)
        x = x + i;
}

struct starpu_codelet spin_cl = [] {
    struct starpu_codelet cl;
    starpu_codelet_init(&cl);
    cl.cpu_funcs[0] = spin;
    cl.nbuffers = 0;
    cl.name = "spin";
    return cl;
}();

class AccountingHook : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/hetpu-hook-test.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
        ledger = dir + "/ledger.sqlite";
        setenv("HETPU_LEDGER", ledger.c_str(), 1);
        setenv("HETPU_ACCOUNTING_QUIET", "1", 1);
        unsetenv("STARPU_SCHED");
        unsetenv("HETPU_PARTITION_CONFIG");
        g_pre = 0;
        g_post = 0;
        g_profiled_ns = 0;
    }
    void TearDown() override
    {
        hetpu_shutdown();
        unsetenv("HETPU_ACCOUNTING");
        fs::remove_all(dir);
    }
    // Starts StarPU on the counting policy and runs n tasks; returns false if StarPU cannot start.
    bool run(int n, bool profiling, bool slow_callbacks = false)
    {
        static struct starpu_sched_policy policy = counting_eager();
        struct starpu_conf conf;
        starpu_conf_init(&conf);
        conf.sched_policy = &policy;
        if (hetpu_init(&conf) != 0)
            return false;
        // Explicitly either way: StarPU keeps the status across shutdown and init.
        starpu_profiling_status_set(profiling ? STARPU_PROFILING_ENABLE : STARPU_PROFILING_DISABLE);
        for (int i = 0; i < n; ++i) {
            struct starpu_task *t = starpu_task_create();
            t->cl = &spin_cl;
            if (slow_callbacks) {
                t->callback_func = slow_callback;
                t->callback_arg = t;
            }
            EXPECT_EQ(starpu_task_submit(t), 0);
        }
        starpu_task_wait_for_all();
        hetpu_shutdown();
        return true;
    }
    std::string dir, ledger;
};

}  // namespace

TEST_F(AccountingHook, WrapsThePolicyHooksAndCountsEveryTask)
{
    ASSERT_TRUE(run(200, false));
    EXPECT_EQ(g_pre.load(), 200);  // the policy's own hooks still run, once per task
    EXPECT_EQ(g_post.load(), 200);
    auto jobs = Ledger(ledger, true).jobs();
    ASSERT_EQ(jobs.size(), 1u);
    const JobRecord &j = jobs[0];
    EXPECT_EQ(j.policy, "eager");
    EXPECT_GT(j.su, 0);
    EXPECT_GT(j.wall_s, 0);
    long long tasks = 0;
    double busy = 0;
    for (const auto &w : j.workers) {
        tasks += w.tasks;
        busy += w.busy_s;
        EXPECT_FALSE(w.energy_source.empty());
    }
    EXPECT_EQ(tasks, 200);
    EXPECT_GT(busy, 0);
    EXPECT_LE(busy, j.wall_s * j.workers.size() + 1e-3);  // no worker is busier than the run is long
}

TEST_F(AccountingHook, UsesStarpuProfilingTimesWhenProfilingIsOn)
{
    // 100 tasks whose callbacks sleep 2 ms: with profiling on, busy time is exactly StarPU's
    // start..end of the codelets, and not the 200+ ms of callbacks.
    ASSERT_TRUE(run(100, true, true));
    auto jobs = Ledger(ledger, true).jobs();
    ASSERT_EQ(jobs.size(), 1u);
    double busy = 0;
    long long tasks = 0;
    for (const auto &w : jobs[0].workers)
        busy += w.busy_s, tasks += w.tasks;
    EXPECT_EQ(tasks, 100);
    const double profiled = g_profiled_ns.load() * 1e-9;
    ASSERT_GT(profiled, 0);
    EXPECT_NEAR(busy, profiled, 0.01 * profiled + 1e-6);
    EXPECT_LT(busy, 0.1);

    // Without profiling the hooks' own stamps time the same codelets: no callbacks either.
    g_profiled_ns = 0;
    fs::remove(ledger);
    ASSERT_TRUE(run(100, false, true));
    EXPECT_EQ(g_profiled_ns.load(), 0);  // profiling really was off
    double own = 0;
    for (const auto &w : Ledger(ledger, true).jobs().at(0).workers)
        own += w.busy_s;
    EXPECT_GT(own, 0);
    EXPECT_LT(own, 0.1);
}

TEST_F(AccountingHook, OffLeavesThePolicyAloneAndRecordsNothing)
{
    setenv("HETPU_ACCOUNTING", "0", 1);
    ASSERT_TRUE(run(50, false));
    EXPECT_EQ(g_post.load(), 50);
    EXPECT_FALSE(fs::exists(ledger));
}

TEST_F(AccountingHook, EachStartIsOneJob)
{
    ASSERT_TRUE(run(10, false));
    ASSERT_TRUE(run(20, false));
    auto jobs = Ledger(ledger, true).jobs();
    ASSERT_EQ(jobs.size(), 2u);
    long long second = 0;
    for (const auto &w : jobs[1].workers)
        second += w.tasks;
    EXPECT_EQ(second, 20);  // slots are reset between runs
}
