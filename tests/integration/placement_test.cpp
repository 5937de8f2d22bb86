// SPDX-License-Identifier: LGPL-2.1-or-later
// Where hetpu's load-balancing policies put ordinary tasks, as counts, never times: on the
// test node (1 CPU + 1 OpenCL worker), independent tasks whose lengths are set by a fake
// per-architecture performance model (seconds long, while the tasks themselves take
// microseconds) go where dmda puts them and where list scheduling by earliest finish
// puts them; a task whose data would take longer to move than it gains stays where its data
// are; with one CPU worker alone, model-placed tasks run by priority. The workers are held
// by gate tasks while the tasks are submitted, so every placement is decided from the
// model alone, whatever the load of the machine. The MGB policies place the tasks they have
// no declared GPU needs for the same way, and a device worker runs one only where MGB's
// Ledger holds it: a task larger than the device runs on the CPU whatever the model says,
// and a task with declared needs stays with MGB's own placement.
#include <hetpu/gpu_needs.h>
#include <hetpu/hetpu.h>

#include <gtest/gtest.h>

#include "tests/integration/scoped_env.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// Seconds each task would take on each kind of worker. Earliest-finish list scheduling
// from two idle workers alternates here, with no tie at any step (the ends differ by at
// least half a second).
struct Cost {
    double cpu_s, opencl_s;
};
const Cost kCosts[] = {{4, 1}, {3, 5}, {2, 2}, {1, 4}, {6, 3}, {2, 1.5}, {3, 2}, {1, 1}};
constexpr int kTasks = sizeof kCosts / sizeof kCosts[0];

double fake_length_us(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned)
{
    const Cost &c = kCosts[*static_cast<const int *>(task->cl_arg)];
    return 1e6 * (arch->devices[0].type == STARPU_OPENCL_WORKER ? c.opencl_s : c.cpu_s);
}

struct starpu_perfmodel fake_model = [] {
    struct starpu_perfmodel m = {};
    m.type = STARPU_PER_ARCH;
    m.arch_cost_function = fake_length_us;
    m.symbol = "hetpu_test_fake_lengths";
    return m;
}();

std::mutex record_mutex;
std::vector<enum starpu_worker_archtype> ran_on(kTasks);  // guarded by record_mutex
std::vector<int> run_order;                               // guarded by record_mutex

void record(void *arg)
{
    std::lock_guard<std::mutex> lock(record_mutex);
    const int id = *static_cast<const int *>(arg);
    ran_on[id] = starpu_worker_get_type(starpu_worker_get_id_check());
    run_order.push_back(id);
}
void record_cpu(void **, void *arg) { record(arg); }
void record_opencl(void **, void *arg) { record(arg); }

struct starpu_codelet both_kinds = [] {
    struct starpu_codelet cl = {};
    cl.cpu_funcs[0] = record_cpu;
    cl.opencl_funcs[0] = record_opencl;
    cl.nbuffers = 0;
    cl.model = &fake_model;
    cl.name = "hetpu_test_placed";
    return cl;
}();

struct starpu_codelet cpu_kind = [] {
    struct starpu_codelet cl = {};
    cl.cpu_funcs[0] = record_cpu;
    cl.nbuffers = 0;
    cl.model = &fake_model;
    cl.name = "hetpu_test_placed_cpu";
    return cl;
}();

// A gate holds one worker (submitted for that worker, so no policy places it) until opened.
std::atomic<int> gates_running{0};
std::atomic<bool> gate_open[STARPU_NMAXWORKERS];

void gate(void **, void *)
{
    const int me = starpu_worker_get_id_check();
    ++gates_running;
    while (!gate_open[me])
        std::this_thread::yield();
}

struct starpu_codelet gate_cl = [] {
    struct starpu_codelet cl = {};
    cl.cpu_funcs[0] = gate;
    cl.opencl_funcs[0] = gate;
    cl.nbuffers = 0;
    cl.name = "hetpu_test_gate";
    return cl;
}();

// Waits for an event, not for a time; the bound only turns a hang into a failure.
template <class Done> bool wait_until(Done done)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (!done() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
    return done();
}

void close_gates(const std::vector<int> &workers)
{
    gates_running = 0;
    for (auto &g : gate_open)
        g = false;
    for (int w : workers) {
        struct starpu_task *t = starpu_task_create();
        t->cl = &gate_cl;
        t->execute_on_a_specific_worker = 1;
        t->workerid = static_cast<unsigned>(w);
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    ASSERT_TRUE(wait_until([&] { return gates_running == static_cast<int>(workers.size()); }))
        << "the gate tasks never started";
}

// One process: the MGB policies need no node-wide arbiter segment.
void use_policy(const std::string &policy)
{
    setenv("STARPU_SCHED", policy.c_str(), 1);
    setenv("HETPU_MGB_ARBITER", "off", 1);
}

void unset_policy()
{
    unsetenv("STARPU_SCHED");
    unsetenv("HETPU_MGB_ARBITER");
}

int worker_of(enum starpu_worker_archtype type)
{
    int ids[1];
    return starpu_worker_get_ids_by_type(type, ids, 1) == 1 ? ids[0] : -1;
}

int ids[kTasks];

// Runs the tasks under `policy` and returns the kind of worker each ran on.
std::vector<enum starpu_worker_archtype> placements(const std::string &policy)
{
    use_policy(policy);
    EXPECT_EQ(hetpu_init(nullptr), 0);
    const int cpu = worker_of(STARPU_CPU_WORKER), opencl = worker_of(STARPU_OPENCL_WORKER);
    EXPECT_TRUE(cpu >= 0 && opencl >= 0) << "the test node has a CPU and an OpenCL worker";
    run_order.clear();
    close_gates({cpu, opencl});
    for (int i = 0; i < kTasks; ++i) {
        ids[i] = i;
        struct starpu_task *t = starpu_task_create();
        t->cl = &both_kinds;
        t->cl_arg = &ids[i];
        EXPECT_EQ(starpu_task_submit(t), 0);
    }
    // One worker at a time: a policy that decides when a worker asks for work (StarPU 1.3's
    // tree keeps tasks above the decision until then) decides them all on that worker's
    // thread, before it runs the first; the other gate opens once one has run.
    gate_open[cpu] = true;
    const bool cpu_ran = wait_until([] {
        std::lock_guard<std::mutex> lock(record_mutex);
        return !run_order.empty();
    });
    EXPECT_TRUE(cpu_ran) << "no task ran on the CPU worker";
    gate_open[opencl] = true;
    starpu_task_wait_for_all();
    hetpu_shutdown();
    unset_policy();
    std::lock_guard<std::mutex> lock(record_mutex);
    return ran_on;
}

// Earliest finish, task by task in submission order, from two idle workers.
std::vector<enum starpu_worker_archtype> list_schedule()
{
    std::vector<enum starpu_worker_archtype> where;
    double cpu_end = 0, opencl_end = 0;
    for (const Cost &c : kCosts)
        if (cpu_end + c.cpu_s < opencl_end + c.opencl_s) {
            cpu_end += c.cpu_s;
            where.push_back(STARPU_CPU_WORKER);
        } else {
            opencl_end += c.opencl_s;
            where.push_back(STARPU_OPENCL_WORKER);
        }
    return where;
}

// A task whose data sit in main memory, a little faster on the OpenCL worker than on the CPU
// by its model, but by less than half the time StarPU's bus model gives for moving its data:
// counted with the transfer, the CPU ends first.
constexpr size_t kBigElements = 4u << 20;  // 16 MiB of floats
double transfer_us = 0;                    // StarPU's prediction, read once the node is up

double transfer_length_us(struct starpu_task *, struct starpu_perfmodel_arch *arch, unsigned)
{
    constexpr double cpu_us = 2e6;
    return arch->devices[0].type == STARPU_OPENCL_WORKER ? cpu_us - transfer_us / 2 : cpu_us;
}

struct starpu_perfmodel transfer_model = [] {
    struct starpu_perfmodel m = {};
    m.type = STARPU_PER_ARCH;
    m.arch_cost_function = transfer_length_us;
    m.symbol = "hetpu_test_fake_transfer";
    return m;
}();

void touch(void **, void *arg) { record(arg); }

struct starpu_codelet with_data = [] {
    struct starpu_codelet cl = {};
    cl.cpu_funcs[0] = touch;
    cl.opencl_funcs[0] = touch;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_R;
    cl.model = &transfer_model;
    cl.name = "hetpu_test_placed_with_data";
    return cl;
}();

struct starpu_codelet opencl_marker = [] {
    struct starpu_codelet cl = {};
    cl.opencl_funcs[0] = record_opencl;
    cl.nbuffers = 0;
    cl.name = "hetpu_test_marker";
    return cl;
}();

// Where the task with data runs under `policy`; sets transfer_us.
enum starpu_worker_archtype data_task_placement(const std::string &policy)
{
    use_policy(policy);
    EXPECT_EQ(hetpu_init(nullptr), 0);
    const int cpu = worker_of(STARPU_CPU_WORKER), opencl = worker_of(STARPU_OPENCL_WORKER);
    std::vector<float> data(kBigElements, 1.0f);
    transfer_us = starpu_transfer_predict(STARPU_MAIN_RAM, starpu_worker_get_memory_node(static_cast<unsigned>(opencl)),
                                          kBigElements * sizeof(float));
    starpu_data_handle_t handle;
    starpu_vector_data_register(&handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(data.data()), kBigElements,
                                sizeof(float));
    run_order.clear();
    close_gates({cpu, opencl});
    ids[0] = 0;
    struct starpu_task *t = starpu_task_create();
    t->cl = &with_data;
    t->cl_arg = &ids[0];
    t->handles[0] = handle;
    EXPECT_EQ(starpu_task_submit(t), 0);
    // Then a marker that only the OpenCL worker can run, decided after the task (behind it in
    // any queue above the decision). The OpenCL worker is let go first: a policy that hands
    // tasks to whoever asks first gives it the task; the CPU's gate opens once the marker ran.
    ids[1] = 1;
    struct starpu_task *marker = starpu_task_create();
    marker->cl = &opencl_marker;
    marker->cl_arg = &ids[1];
    EXPECT_EQ(starpu_task_submit(marker), 0);
    gate_open[opencl] = true;
    EXPECT_TRUE(wait_until([] {
        std::lock_guard<std::mutex> lock(record_mutex);
        return std::find(run_order.begin(), run_order.end(), 1) != run_order.end();
    })) << "the marker never ran";
    gate_open[cpu] = true;
    starpu_task_wait_for_all();
    starpu_data_unregister(handle);
    hetpu_shutdown();
    unset_policy();
    std::lock_guard<std::mutex> lock(record_mutex);
    return ran_on[0];
}

class Placement : public ::testing::TestWithParam<std::string> {};

std::string test_name(const ::testing::TestParamInfo<std::string> &info)
{
    std::string name = info.param;
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
}

}  // namespace

TEST_P(Placement, EachTaskGoesWhereDmdaPutsIt)
{
    const std::vector<enum starpu_worker_archtype> expected = list_schedule();
    ASSERT_EQ(std::count(expected.begin(), expected.end(), STARPU_CPU_WORKER), kTasks / 2)
        << "the graph uses both workers";
    const std::vector<enum starpu_worker_archtype> dmda = placements("dmda");
    ASSERT_EQ(dmda, expected) << "dmda places by earliest finish here";
    EXPECT_EQ(placements(GetParam()), dmda) << "under " << GetParam();
}

TEST_P(Placement, TheDataTransferCounts)
{
    const enum starpu_worker_archtype dmda = data_task_placement("dmda");
    ASSERT_GT(transfer_us, 1000) << "StarPU's bus model predicts a transfer of 16 MiB to the OpenCL device";
    ASSERT_EQ(dmda, STARPU_CPU_WORKER) << "dmda counts the transfer";
    EXPECT_EQ(data_task_placement(GetParam()), STARPU_CPU_WORKER) << "under " << GetParam();
}

// On the CPU worker alone: an idle OpenCL worker polls for work and may move one task down
// from the queue above the decision while the submitting thread moves the next, swapping two
// tasks of one priority (see ordinary_tasks_test.cpp).
TEST_P(Placement, ModelPlacedTasksRunByPriorityOnOneWorker)
{
    use_policy(GetParam());
    const int init = [] {
        hetpu_test::ScopedEnv cpu_alone("STARPU_NOPENCL", "0");
        return hetpu_init(nullptr);
    }();
    ASSERT_EQ(init, 0);
    const int cpu = worker_of(STARPU_CPU_WORKER);
    ASSERT_GE(cpu, 0);
    run_order.clear();
    close_gates({cpu});
    static const int priorities[kTasks] = {0, 3, -2, 3, 1, 0, 5, -2};
    for (int i = 0; i < kTasks; ++i) {
        ids[i] = i;
        struct starpu_task *t = starpu_task_create();
        t->cl = &cpu_kind;
        t->cl_arg = &ids[i];
        t->priority = priorities[i];
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    gate_open[cpu] = true;
    starpu_task_wait_for_all();
    hetpu_shutdown();
    unset_policy();
    std::vector<int> expected(ids, ids + kTasks);
    std::stable_sort(expected.begin(), expected.end(), [](int a, int b) { return priorities[a] > priorities[b]; });
    EXPECT_EQ(run_order, expected) << "under " << GetParam();
}

// The policies whose ordinary tasks StarPU's component tree places (component_policy.h).
INSTANTIATE_TEST_SUITE_P(LoadBalancingPolicies, Placement,
                         ::testing::Values("greedy", "plb-hac", "hdss", "hepopta", "htpopta"), test_name);
// The MGB policies: the tasks they have no declared GPU needs for, placed by the same tree
// behind MGB's Ledger (sched_policies/mgb/scheduler.h).
INSTANTIATE_TEST_SUITE_P(MgbPolicies, Placement, ::testing::Values("mgb", "mgb-exact", "sa", "cg"), test_name);

namespace {

// 16 MiB of data, a hundred times faster on the OpenCL worker by its model: the tree puts
// it on the device whenever it may.
double device_favoured_us(struct starpu_task *, struct starpu_perfmodel_arch *arch, unsigned)
{
    return arch->devices[0].type == STARPU_OPENCL_WORKER ? 1e6 : 1e8;
}

struct starpu_perfmodel device_favoured_model = [] {
    struct starpu_perfmodel m = {};
    m.type = STARPU_PER_ARCH;
    m.arch_cost_function = device_favoured_us;
    m.symbol = "hetpu_test_fake_device_favoured";
    return m;
}();

struct starpu_codelet device_favoured = [] {
    struct starpu_codelet cl = {};
    cl.cpu_funcs[0] = touch;
    cl.opencl_funcs[0] = touch;
    cl.nbuffers = 1;
    cl.modes[0] = STARPU_R;
    cl.model = &device_favoured_model;
    cl.name = "hetpu_test_device_favoured";
    return cl;
}();

// The other way round: a hundred times slower on the OpenCL worker.
double cpu_favoured_us(struct starpu_task *, struct starpu_perfmodel_arch *arch, unsigned)
{
    return arch->devices[0].type == STARPU_OPENCL_WORKER ? 1e8 : 1e6;
}

struct starpu_perfmodel cpu_favoured_model = [] {
    struct starpu_perfmodel m = {};
    m.type = STARPU_PER_ARCH;
    m.arch_cost_function = cpu_favoured_us;
    m.symbol = "hetpu_test_fake_cpu_favoured";
    return m;
}();

void one_small_block(struct starpu_task *, struct hetpu_gpu_needs *needs)
{
    needs->blocks = 1;
    needs->threads_per_block = 32;
}

// Where one task of `cl` with 16 MiB of data runs under `policy`, the OpenCL device limited
// to `opencl_mib` MiB (0: no limit).
enum starpu_worker_archtype one_task_placement(const std::string &policy, struct starpu_codelet *cl,
                                               unsigned opencl_mib)
{
    if (opencl_mib)
        setenv("STARPU_LIMIT_OPENCL_MEM", std::to_string(opencl_mib).c_str(), 1);
    use_policy(policy);
    EXPECT_EQ(hetpu_init(nullptr), 0);
    EXPECT_GE(worker_of(STARPU_OPENCL_WORKER), 0) << "the test node has an OpenCL worker";
    std::vector<float> data(kBigElements, 1.0f);
    starpu_data_handle_t handle;
    starpu_vector_data_register(&handle, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(data.data()), kBigElements,
                                sizeof(float));
    run_order.clear();
    ids[0] = 0;
    struct starpu_task *t = starpu_task_create();
    t->cl = cl;
    t->cl_arg = &ids[0];
    t->handles[0] = handle;
    EXPECT_EQ(starpu_task_submit(t), 0);
    starpu_task_wait_for_all();
    starpu_data_unregister(handle);
    hetpu_shutdown();
    unset_policy();
    unsetenv("STARPU_LIMIT_OPENCL_MEM");
    std::lock_guard<std::mutex> lock(record_mutex);
    EXPECT_EQ(run_order.size(), 1u);
    return ran_on[0];
}

class MgbLedger : public ::testing::TestWithParam<std::string> {};

}  // namespace

// Memory safety whatever the component tree: the tree chooses the device, MGB's Ledger
// says the device can never hold the task's data, and it runs on the CPU.
TEST_P(MgbLedger, TheTreeNeverPutsATaskWhereItDoesNotFit)
{
    ASSERT_EQ(one_task_placement(GetParam(), &device_favoured, 0), STARPU_OPENCL_WORKER)
        << "without a limit the tree puts the task on the device";
    EXPECT_EQ(one_task_placement(GetParam(), &device_favoured, 8), STARPU_CPU_WORKER)
        << "16 MiB of data on a device limited to 8 MiB, under " << GetParam();
}

// A task with declared GPU needs is MGB's to pack: it goes to the device that holds it,
// whatever the cost model says; the same task undeclared goes where the model says.
TEST_P(MgbLedger, TasksWithDeclaredNeedsStayWithMgb)
{
    struct starpu_codelet cl = device_favoured;
    cl.model = &cpu_favoured_model;
    cl.name = "hetpu_test_cpu_favoured";
    EXPECT_EQ(one_task_placement(GetParam(), &cl, 0), STARPU_CPU_WORKER) << "undeclared, under " << GetParam();
    ASSERT_EQ(hetpu_codelet_set_gpu_needs(&cl, one_small_block), 0);
    EXPECT_EQ(one_task_placement(GetParam(), &cl, 0), STARPU_OPENCL_WORKER) << "declared, under " << GetParam();
    ASSERT_EQ(hetpu_codelet_set_gpu_needs(&cl, nullptr), 0);
}

INSTANTIATE_TEST_SUITE_P(MgbPolicies, MgbLedger, ::testing::Values("mgb", "mgb-exact", "sa", "cg"), test_name);
