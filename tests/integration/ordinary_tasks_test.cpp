// SPDX-License-Identifier: LGPL-2.1-or-later
// Ordinary (non-divisible) tasks under hetpu's policies: with and without a StarPU
// performance model, every task runs exactly once and the program never hangs; queued
// tasks run by priority, FIFO within one priority.
#include <hetpu/hetpu.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/start/starpu_compat.h"
#include "tests/integration/scoped_env.h"
#include "tests/integration/add_one_codelet.h"

namespace {

struct starpu_perfmodel add_one_model = [] {
    struct starpu_perfmodel m = {};
    m.type = STARPU_HISTORY_BASED;
    m.symbol = "hetpu_test_add_one_history";
    return m;
}();

// add_one with a history-based model: after StarPU has calibrated it on both worker
// types, StarPU's component tree places these tasks by earliest predicted finish.
struct starpu_codelet modelled_add_one = [] {
    struct starpu_codelet cl = add_one_codelet;
    cl.model = &add_one_model;
    cl.name = "hetpu_test_add_one_modelled";
    return cl;
}();

class OrdinaryTasks : public ::testing::TestWithParam<const char *> {
protected:
    void TearDown() override
    {
        add_one_codelet_unload();
        hetpu_shutdown();
        unsetenv("STARPU_SCHED");
    }
};

}  // namespace

TEST_P(OrdinaryTasks, EveryTaskRunsOnceWithAndWithoutAModel)
{
    setenv("STARPU_SCHED", GetParam(), 1);
    ASSERT_EQ(hetpu_init(nullptr), 0);
    add_one_codelet_load();
    constexpr int kTasks = 48, kRounds = 3, kSize = 64;
    std::vector<std::vector<float>> data(kTasks, std::vector<float>(kSize, 0.0f));
    std::vector<starpu_data_handle_t> handles(kTasks);
    for (int t = 0; t < kTasks; ++t)
        starpu_vector_data_register(&handles[t], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(data[t].data()), kSize,
                                    sizeof(float));
    // Round 0 calibrates the model (its tasks go where samples are missing); later rounds are model-placed.
    for (int round = 0; round < kRounds; ++round)
        for (int t = 0; t < kTasks; ++t) {
            struct starpu_task *task = starpu_task_create();
            task->cl = t % 2 ? &modelled_add_one : &add_one_codelet;
            task->handles[0] = handles[t];
            ASSERT_EQ(starpu_task_submit(task), 0);
        }
    starpu_task_wait_for_all();
    for (auto h : handles)
        starpu_data_unregister(h);
    for (int t = 0; t < kTasks; ++t)
        for (float v : data[t])
            ASSERT_EQ(v, static_cast<float>(kRounds)) << "task chain " << t;
}

INSTANTIATE_TEST_SUITE_P(HetpuPolicies, OrdinaryTasks, ::testing::Values("greedy", "plb-hac", "hdss"));

namespace {

// A CPU-only task that holds the only CPU worker until released, so that the tasks
// submitted meanwhile all wait in the policy's queue and their order is the policy's alone.
std::atomic<bool> gate_running{false}, gate_open{false};
std::mutex order_mutex;
std::vector<int> order;  // guarded by order_mutex

void gate_cpu(void **, void *)
{
    gate_running = true;
    while (!gate_open)
        std::this_thread::yield();
}

void record_cpu(void **, void *arg)
{
    std::lock_guard<std::mutex> lock(order_mutex);
    order.push_back(*static_cast<const int *>(arg));
}

struct starpu_codelet cpu_only(void (*fn)(void **, void *), const char *name)
{
    struct starpu_codelet cl = {};
    cl.cpu_funcs[0] = fn;
    cl.nbuffers = 0;
    cl.name = name;
    return cl;
}

struct starpu_codelet gate_cl = cpu_only(gate_cpu, "hetpu_test_gate");
struct starpu_codelet record_cl = cpu_only(record_cpu, "hetpu_test_record");

std::vector<std::string> hetpu_policy_names()
{
    std::vector<std::string> names;
    for (struct starpu_sched_policy **p = starpu_get_sched_lib_policies(); *p; ++p)
        if (std::string name = (*p)->policy_name; name.rfind("test-", 0) != 0)  // divisible_test.cpp's own
            names.push_back(name);
    return names;
}

// The CPU worker alone. With an idle OpenCL worker, which polls for work, that worker may
// move one task down from the priority queue above the decision while the submitting thread
// moves the next, so two tasks of one priority can swap before they reach the queue where
// they wait: a tie order of StarPU's queue above the tree, not of the queues checked here.
class Priorities : public ::testing::TestWithParam<std::string> {
protected:
    void TearDown() override
    {
        gate_open = true;  // never leave the worker spinning, whatever failed
        starpu_task_wait_for_all();
        hetpu_shutdown();
        unsetenv("STARPU_SCHED");
    }

private:
    hetpu_test::ScopedEnv cpu_alone_{"STARPU_NOPENCL", "0"};
};

}  // namespace

TEST_P(Priorities, QueuedTasksRunByPriorityThenInSubmissionOrder)
{
    setenv("STARPU_SCHED", GetParam().c_str(), 1);
    ASSERT_EQ(hetpu_init(nullptr), 0);
    ASSERT_EQ(starpu_cpu_worker_get_count(), 1u) << "the test node has one CPU worker";
    EXPECT_LT(starpu_sched_get_min_priority(), starpu_sched_get_max_priority()) << "a priority range is announced";
    gate_running = false;
    gate_open = false;
    order.clear();

    struct starpu_task *gate = starpu_task_create();
    gate->cl = &gate_cl;
    ASSERT_EQ(starpu_task_submit(gate), 0);
    // Waits for an event, not for a time: the gate holds the CPU worker from here on.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (!gate_running && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
    ASSERT_TRUE(gate_running) << "the gate task never started";

    static const int priorities[] = {0, 2, -1, 2, 0, 5, -3, 5, 0, 2, -1, 0};
    constexpr int n = sizeof priorities / sizeof priorities[0];
    static int ids[n];
    for (int i = 0; i < n; ++i) {
        ids[i] = i;
        struct starpu_task *t = starpu_task_create();
        t->cl = &record_cl;
        t->cl_arg = &ids[i];
        t->priority = priorities[i];
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    gate_open = true;
    starpu_task_wait_for_all();

    std::vector<int> expected(ids, ids + n);
    std::stable_sort(expected.begin(), expected.end(), [](int a, int b) { return priorities[a] > priorities[b]; });
    EXPECT_EQ(order, expected) << "under " << GetParam();
}

// Every policy hetpu exports, so that a new one is covered the day it is registered.
INSTANTIATE_TEST_SUITE_P(HetpuPolicies, Priorities, ::testing::ValuesIn(hetpu_policy_names()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                             std::string name = info.param;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

namespace {

// Two CPU workers. Gate tasks without a model each hold a worker until released; a second
// gate can only start on a second worker. A tree that piles such tasks onto the first
// worker's queue leaves the second gate waiting behind the first, which never ends until
// both run: the wait below then ends at its deadline and the test fails (a count of gates
// running at once, not a time).
std::atomic<int> gates_running{0};

void held_gate_cpu(void **, void *)
{
    ++gates_running;
    while (!gate_open)
        std::this_thread::yield();
}

struct starpu_codelet held_gate_cl = cpu_only(held_gate_cpu, "hetpu_test_held_gate");

class UnmodelledTasks : public ::testing::TestWithParam<std::string> {
protected:
    void TearDown() override
    {
        gate_open = true;
        starpu_task_wait_for_all();
        hetpu_shutdown();
        unsetenv("STARPU_SCHED");
    }

private:
    hetpu_test::ScopedEnv two_cpus_{"STARPU_NCPU", "2"};
    hetpu_test::ScopedEnv no_opencl_{"STARPU_NOPENCL", "0"};
};

}  // namespace

TEST_P(UnmodelledTasks, SpreadOverTheFreeWorkers)
{
    setenv("STARPU_SCHED", GetParam().c_str(), 1);
    ASSERT_EQ(hetpu_init(nullptr), 0);
    ASSERT_EQ(starpu_cpu_worker_get_count(), 2u);
    gates_running = 0;
    gate_open = false;
    for (int i = 0; i < 2; ++i) {
        struct starpu_task *t = starpu_task_create();
        t->cl = &held_gate_cl;
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    // Waits for an event; the deadline only turns a stranded gate into a failure.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (gates_running < 2 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
    EXPECT_EQ(gates_running.load(), 2) << "under " << GetParam() << ": the second task waits behind the first";
}

INSTANTIATE_TEST_SUITE_P(HetpuPolicies, UnmodelledTasks, ::testing::ValuesIn(hetpu_policy_names()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                             std::string name = info.param;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });
