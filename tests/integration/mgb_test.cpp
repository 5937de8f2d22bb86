// SPDX-License-Identifier: LGPL-2.1-or-later
// The MGB policies (mgb, mgb-exact, sa, cg) on the test node (1 CPU worker + 1 OpenCL
// worker on PoCL): ordinary tasks of every kind run exactly once, divisible jobs run with
// fixed blocks, a task too large for the device runs on the CPU, and the needs API.
#include <hetpu/divisible.h>
#include <hetpu/gpu_needs.h>
#include <hetpu/hetpu.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <vector>

#include "tests/integration/add_one_codelet.h"

namespace {

struct starpu_codelet cpu_only_add_one = [] {
    struct starpu_codelet cl = add_one_codelet;
    cl.opencl_funcs[0] = nullptr;
    cl.name = "hetpu_test_add_one_cpu_only";
    return cl;
}();

class MgbPolicies : public ::testing::TestWithParam<const char *> {
protected:
    void start()
    {
        setenv("STARPU_SCHED", GetParam(), 1);
        setenv("HETPU_MGB_ARBITER", "off", 1);  // one process: no node-wide segment needed
        ASSERT_EQ(hetpu_init(nullptr), 0);
        add_one_codelet_load();
    }
    void TearDown() override
    {
        if (hetpu_policy_name())
            add_one_codelet_unload();
        hetpu_shutdown();
        unsetenv("STARPU_SCHED");
        unsetenv("HETPU_MGB_ARBITER");
        unsetenv("STARPU_LIMIT_OPENCL_MEM");
    }
};

std::atomic<int> ran_on_cpu{0}, ran_elsewhere{0};
void count_worker(void *)
{
    (starpu_worker_get_type(starpu_worker_get_id()) == STARPU_CPU_WORKER ? ran_on_cpu : ran_elsewhere)++;
}

}  // namespace

TEST_P(MgbPolicies, EveryOrdinaryTaskRunsOnce)
{
    start();
    ASSERT_STREQ(hetpu_policy_name(), GetParam());
    constexpr int kTasks = 40, kRounds = 3, kSize = 256;
    std::vector<std::vector<float>> data(kTasks, std::vector<float>(kSize, 0.0f));
    std::vector<starpu_data_handle_t> handles(kTasks);
    for (int t = 0; t < kTasks; ++t)
        starpu_vector_data_register(&handles[t], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(data[t].data()), kSize,
                                    sizeof(float));
    // Both kinds of task: CPU + OpenCL (placed on the device or an idle CPU) and CPU only
    // (the shared CPU queue), with dependencies through the shared handles.
    for (int round = 0; round < kRounds; ++round)
        for (int t = 0; t < kTasks; ++t) {
            struct starpu_task *task = starpu_task_create();
            task->cl = (t + round) % 3 ? &add_one_codelet : &cpu_only_add_one;
            task->handles[0] = handles[t];
            task->priority = t % 4;
            ASSERT_EQ(starpu_task_submit(task), 0);
        }
    starpu_task_wait_for_all();
    for (auto h : handles)
        starpu_data_unregister(h);
    for (int t = 0; t < kTasks; ++t)
        for (float v : data[t])
            ASSERT_EQ(v, static_cast<float>(kRounds)) << "task chain " << t;
}

TEST_P(MgbPolicies, TaskLargerThanTheDeviceRunsOnTheCpu)
{
    setenv("STARPU_LIMIT_OPENCL_MEM", "1", 1);  // MiB: each task below needs 2
    start();
    ran_on_cpu = ran_elsewhere = 0;
    constexpr int kTasks = 6, kSize = 512 * 1024;
    std::vector<std::vector<float>> data(kTasks, std::vector<float>(kSize, 0.0f));
    std::vector<starpu_data_handle_t> handles(kTasks);
    for (int t = 0; t < kTasks; ++t) {
        starpu_vector_data_register(&handles[t], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(data[t].data()), kSize,
                                    sizeof(float));
        struct starpu_task *task = starpu_task_create();
        task->cl = &add_one_codelet;
        task->handles[0] = handles[t];
        task->callback_func = count_worker;
        ASSERT_EQ(starpu_task_submit(task), 0);
    }
    starpu_task_wait_for_all();
    for (auto h : handles)
        starpu_data_unregister(h);
    EXPECT_EQ(ran_on_cpu.load(), kTasks);
    EXPECT_EQ(ran_elsewhere.load(), 0);
    for (int t = 0; t < kTasks; ++t)
        ASSERT_EQ(data[t][kSize - 1], 1.0f);
}

namespace {
struct VectorJob {
    std::vector<float> values = std::vector<float>(4096, 0.0f);
};
int fill_block(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task)
{
    auto *job = static_cast<VectorJob *>(arg);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(job->values.data() + offset), count,
                                sizeof(float));
    task->cl = &add_one_codelet;
    task->handles[0] = h;
    return 0;
}
}  // namespace

TEST_P(MgbPolicies, DivisibleJobRunsWithFixedBlocks)
{
    start();
    VectorJob data;
    hetpu_divisible_job job = {};
    job.name = "mgb-test";
    job.total = data.values.size();
    job.granule = 64;
    job.default_block = 256;
    job.fill_task = fill_block;
    job.block_handle_mask = 1;
    job.codelet = &add_one_codelet;
    job.arg = &data;
    hetpu_divisible_report report;
    ASSERT_EQ(hetpu_divisible_run(&job, &report), 0);
    EXPECT_STREQ(report.planner, "fixed");
    EXPECT_EQ(report.blocks, 4096u / 256);
    for (float v : data.values)
        ASSERT_EQ(v, 1.0f);
}

INSTANTIATE_TEST_SUITE_P(Mgb, MgbPolicies, ::testing::Values("mgb", "mgb-exact", "sa", "cg"));

namespace {
void codelet_needs(struct starpu_task *, struct hetpu_gpu_needs *needs)
{
    needs->blocks = 10;
    needs->threads_per_block = 128;
    needs->scratch_bytes = 4096;
}
}  // namespace

TEST(MgbNeeds, PerTaskNeedsWinOverTheCodeletAndServeOneExecution)
{
    setenv("STARPU_SCHED", "mgb", 1);
    setenv("HETPU_MGB_ARBITER", "off", 1);
    ASSERT_EQ(hetpu_init(nullptr), 0);
    add_one_codelet_load();
    struct starpu_codelet cl = add_one_codelet;
    ASSERT_EQ(hetpu_codelet_set_gpu_needs(&cl, codelet_needs), 0);

    std::vector<float> values(64, 0.0f);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(values.data()), values.size(),
                                sizeof(float));
    struct starpu_task *task = starpu_task_create();
    task->cl = &cl;
    task->handles[0] = h;
    task->destroy = 0;
    task->detach = 0;

    struct hetpu_gpu_needs needs;
    EXPECT_EQ(hetpu_gpu_needs_of(task, &needs), 1);
    EXPECT_EQ(needs.blocks, 10u) << "the codelet's callback";
    const struct hetpu_gpu_needs mine = {1 << 20, 3, 64, 512};
    ASSERT_EQ(hetpu_task_set_gpu_needs(task, &mine), 0);
    EXPECT_EQ(hetpu_gpu_needs_of(task, &needs), 1);
    EXPECT_EQ(needs.blocks, 3u);
    EXPECT_EQ(needs.scratch_bytes, size_t(1) << 20);
    EXPECT_EQ(needs.shared_mem_per_block, 512u);

    ASSERT_EQ(starpu_task_submit(task), 0);
    ASSERT_EQ(starpu_task_wait(task), 0);
    // Scheduling consumed the per-task entry: the codelet's callback answers again.
    EXPECT_EQ(hetpu_gpu_needs_of(task, &needs), 1);
    EXPECT_EQ(needs.blocks, 10u);

    ASSERT_EQ(hetpu_codelet_set_gpu_needs(&cl, nullptr), 0);
    EXPECT_EQ(hetpu_gpu_needs_of(task, &needs), 0);
    EXPECT_EQ(needs.blocks, 0u);
    starpu_task_destroy(task);
    starpu_data_unregister(h);
    EXPECT_EQ(values[0], 1.0f);
    add_one_codelet_unload();
    hetpu_shutdown();
    unsetenv("STARPU_SCHED");
    unsetenv("HETPU_MGB_ARBITER");
}

TEST(MgbNeeds, NullArgumentsAreRejected)
{
    struct hetpu_gpu_needs needs;
    EXPECT_EQ(hetpu_codelet_set_gpu_needs(nullptr, codelet_needs), -EINVAL);
    EXPECT_EQ(hetpu_task_set_gpu_needs(nullptr, &needs), -EINVAL);
    EXPECT_EQ(hetpu_gpu_needs_of(nullptr, &needs), -EINVAL);
}

namespace {
// The device "kernel" blocks until the CPU has run one of the tasks (or 20 s pass): the
// device stays busy with a queue behind it, so the run finishes early only if the idle CPU
// worker takes queued tasks.
std::atomic<int> cpu_runs{0};
std::atomic<bool> device_gave_up{false};
void mark_cpu(void *[], void *) { cpu_runs++; }
void wait_for_cpu(void *[], void *)
{
    if (device_gave_up.load())  // a failing run should fail in seconds, not minutes
        return;
    for (int i = 0; i < 20000 && cpu_runs.load() == 0; ++i)
        usleep(1000);
    if (cpu_runs.load() == 0)
        device_gave_up = true;
}
// Declared needs make the tasks MGB's to place (undeclared ones go through StarPU's
// component tree, which places them by model and never queues them behind the device).
void one_block(struct starpu_task *, struct hetpu_gpu_needs *needs)
{
    needs->blocks = 1;
    needs->threads_per_block = 32;
}
}  // namespace

TEST(MgbSteal, IdleCpuTakesTasksQueuedOnABusyDevice)
{
    setenv("STARPU_SCHED", "mgb", 1);
    setenv("HETPU_MGB_ARBITER", "off", 1);
    ASSERT_EQ(hetpu_init(nullptr), 0);
    if (starpu_opencl_worker_get_count() == 0) {
        hetpu_shutdown();
        GTEST_SKIP() << "no OpenCL worker";
    }
    struct starpu_codelet cl;
    starpu_codelet_init(&cl);
    cl.cpu_funcs[0] = mark_cpu;
    cl.opencl_funcs[0] = wait_for_cpu;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_RW;
    cl.name = "hetpu_test_steal";
    ASSERT_EQ(hetpu_codelet_set_gpu_needs(&cl, one_block), 0);
    cpu_runs = 0;
    device_gave_up = false;
    constexpr int kTasks = 8;
    std::vector<std::vector<float>> data(kTasks, std::vector<float>(16, 0.0f));
    std::vector<starpu_data_handle_t> handles(kTasks);
    for (int t = 0; t < kTasks; ++t) {
        starpu_vector_data_register(&handles[t], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(data[t].data()), 16,
                                    sizeof(float));
        ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, handles[t], 0), 0);
    }
    starpu_task_wait_for_all();
    for (auto h : handles)
        starpu_data_unregister(h);
    hetpu_shutdown();
    hetpu_codelet_set_gpu_needs(&cl, nullptr);
    unsetenv("STARPU_SCHED");
    unsetenv("HETPU_MGB_ARBITER");
    EXPECT_GT(cpu_runs.load(), 0);
    EXPECT_FALSE(device_gave_up.load()) << "the CPU worker never took a task queued on the device";
}
