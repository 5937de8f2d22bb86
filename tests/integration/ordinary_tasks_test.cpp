// Ordinary (non-divisible) tasks under hetpu's policies: with and without a StarPU
// performance model, every task runs exactly once and the program never hangs.
#include <hetpu/hetpu.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "tests/integration/add_one_codelet.h"

namespace {

struct starpu_perfmodel add_one_model = [] {
    struct starpu_perfmodel m = {};
    m.type = STARPU_HISTORY_BASED;
    m.symbol = "hetpu_test_add_one_history";
    return m;
}();

// add_one with a history-based model: after StarPU has calibrated it on both worker
// types, plb-hac and hdss place these tasks by earliest predicted finish.
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
    // Round 0 calibrates the model through the FIFO; later rounds may be model-placed.
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
