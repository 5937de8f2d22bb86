// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu_divisible_run() on a real StarPU node (1 CPU + 1 OpenCL worker via PoCL).
#include <hetpu/divisible.h>
#include <hetpu/hetpu.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/divisible/core/planner_extensions.h"
#include "runtime/start/policy_registry.h"
#include "tests/integration/add_one_codelet.h"

namespace {

struct VectorJob {
    std::vector<float> y;
    uint64_t fail_from = UINT64_MAX;  // fill_task fails for blocks starting at or after this
    struct starpu_codelet *codelet = &add_one_codelet;
};

int fill_add_one(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task)
{
    auto *job = static_cast<VectorJob *>(arg);
    if (offset >= job->fail_from)
        return -ENOMEM;
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(job->y.data() + offset), count,
                                sizeof(float));
    task->cl = job->codelet;
    task->handles[0] = h;
    return 0;
}

hetpu_divisible_job make_job(VectorJob &data, uint64_t total)
{
    data.y.assign(total, 0.0f);
    hetpu_divisible_job job = {};
    job.name = "add-one";
    job.total = total;
    job.granule = 16;
    job.default_block = 64;
    job.fill_task = fill_add_one;
    job.block_handle_mask = 1u;
    job.codelet = data.codelet;
    job.arg = &data;
    return job;
}

void expect_each_element_once(const VectorJob &data)
{
    for (size_t i = 0; i < data.y.size(); ++i)
        ASSERT_EQ(data.y[i], 1.0f) << "element " << i;
}

const hetpu_worker_report *find_worker(const hetpu_divisible_report &r, enum starpu_worker_archtype type)
{
    for (unsigned i = 0; i < r.nworkers; ++i)
        if (r.workers[i].type == type)
            return &r.workers[i];
    return nullptr;
}

// A planner that pins blocks: 32 elements for the CPU worker, 96 for the OpenCL one, and
// checks that every block ran where it was sent.
class PinningPlanner : public hetpu::BlockPlanner, public hetpu::PlannerExtensions {
public:
    hetpu::PlannerExtensions *extensions() override { return this; }
    void block_done_refitted(const hetpu::BlockDone &done, hetpu::PuRefit *) override { block_done(done); }
    explicit PinningPlanner(std::vector<hetpu::PlannerWorker> workers) : workers_(std::move(workers)) {}
    std::string name() const override { return "test-pinning"; }
    bool assigns_workers() const override { return true; }
    uint64_t next_block(int worker, uint64_t) override
    {
        for (const auto &w : workers_)
            if (w.id == worker)
                return w.kind == hetpu::WorkerKind::Cpu ? 32 : 96;
        return 0;
    }
    void block_done(const hetpu::BlockDone &done) override
    {
        std::lock_guard<std::mutex> lock(mutex);
        ran_on[done.worker] += done.count;
        if (done.exec_s <= 0)
            ++untimed;
        ended[done.offset] = done.end_s;
    }
    void results_home(const hetpu::BlockHome &home) override
    {
        std::lock_guard<std::mutex> lock(mutex);
        came_home[home.worker] += home.count;
        // After its block_done, with that block's end time.
        if (ended.count(home.offset) == 0 || ended[home.offset] != home.end_s || !(home.home_s > 0))
            ++homes_out_of_order;
    }
    static std::mutex mutex;
    static std::map<int, uint64_t> ran_on, came_home;
    static std::map<uint64_t, double> ended;  // end_s by block offset
    static int untimed, homes_out_of_order;

private:
    std::vector<hetpu::PlannerWorker> workers_;
};
std::mutex PinningPlanner::mutex;
std::map<int, uint64_t> PinningPlanner::ran_on, PinningPlanner::came_home;
std::map<uint64_t, double> PinningPlanner::ended;
int PinningPlanner::untimed = 0, PinningPlanner::homes_out_of_order = 0;

std::unique_ptr<hetpu::BlockPlanner> make_pinning_planner(const std::vector<hetpu::PlannerWorker> &workers,
                                                          const hetpu::BlockRules &)
{
    return std::make_unique<PinningPlanner>(workers);
}

// A test policy: StarPU's eager for ordinary tasks, plus the pinning planner.
struct starpu_sched_policy test_pinning_policy = [] {
    struct starpu_sched_policy p = *hetpu::find_builtin_policy("eager");
    p.policy_name = "test-pinning";
    p.policy_description = "test only: eager + a planner that pins blocks";
    return p;
}();
HETPU_REGISTER_POLICY(test_pinning_policy, make_pinning_planner);

class Divisible : public ::testing::Test {
protected:
    void start(const char *policy)
    {
        setenv("STARPU_SCHED", policy, 1);
        ASSERT_EQ(hetpu_init(nullptr), 0);
        add_one_codelet_load();
    }
    void TearDown() override
    {
        if (hetpu_policy_name())
            add_one_codelet_unload();
        hetpu_shutdown();
        unsetenv("STARPU_SCHED");
        unsetenv("HETPU_BLOCK");
        unsetenv("STARPU_LIMIT_MAX_SUBMITTED_TASKS");
        unsetenv("STARPU_LIMIT_MIN_SUBMITTED_TASKS");
    }
};

}  // namespace

namespace {

// Under greedy the first idle worker takes the next block, so on a loaded machine the CPU
// worker could take them all. Its blocks therefore wait (bounded) until the OpenCL worker
// has started one: both worker types take part by construction, not by the machine's mood.
std::atomic<bool> opencl_block_started{false};
starpu_cpu_func_t add_one_cpu_func;
starpu_opencl_func_t add_one_opencl_func;

void cpu_after_opencl(void *buffers[], void *arg)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!opencl_block_started && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    add_one_cpu_func(buffers, arg);
}

void opencl_announced(void *buffers[], void *arg)
{
    opencl_block_started = true;
    add_one_opencl_func(buffers, arg);
}

// add_one_codelet with its implementations replaced by wrappers, which call the originals
// through add_one_cpu_func and add_one_opencl_func (set here).
struct starpu_codelet add_one_wrapped(starpu_cpu_func_t cpu, starpu_opencl_func_t opencl)
{
    add_one_cpu_func = add_one_codelet.cpu_funcs[0];
    add_one_opencl_func = add_one_codelet.opencl_funcs[0];
    struct starpu_codelet wrapped = add_one_codelet;
    wrapped.cpu_funcs[0] = cpu;
    wrapped.opencl_funcs[0] = opencl;
    return wrapped;
}

}  // namespace

TEST_F(Divisible, GreedyCoversEveryElementOnceOnBothWorkerTypes)
{
    start("greedy");
    struct starpu_codelet both = add_one_wrapped(cpu_after_opencl, opencl_announced);
    ASSERT_TRUE(add_one_cpu_func && add_one_opencl_func) << "the test node has CPU and OpenCL implementations";
    opencl_block_started = false;
    VectorJob data;
    data.codelet = &both;
    hetpu_divisible_job job = make_job(data, 8192);
    hetpu_divisible_report report;
    ASSERT_EQ(hetpu_divisible_run(&job, &report), 0);
    expect_each_element_once(data);

    EXPECT_EQ(report.elements, 8192u);
    EXPECT_EQ(report.blocks, 8192u / 64);
    EXPECT_EQ(report.fixed_block, 64u);
    EXPECT_STREQ(report.planner, "fixed");
    EXPECT_GT(report.makespan_s, 0.0);
    ASSERT_EQ(report.nworkers, 2u);
    const hetpu_worker_report *cpu = find_worker(report, STARPU_CPU_WORKER);
    const hetpu_worker_report *ocl = find_worker(report, STARPU_OPENCL_WORKER);
    ASSERT_TRUE(cpu && ocl);
    EXPECT_GT(cpu->blocks, 0u);
    EXPECT_GT(ocl->blocks, 0u);
    EXPECT_EQ(cpu->elements + ocl->elements, 8192u);
    EXPECT_GT(cpu->busy_s, 0.0);
    EXPECT_GT(ocl->busy_s, 0.0);
}

TEST_F(Divisible, BuiltinPolicyUsesHetpuBlockFromTheEnvironment)
{
    setenv("HETPU_BLOCK", "128", 1);
    start("eager");
    VectorJob data;
    hetpu_divisible_job job = make_job(data, 4096);
    hetpu_divisible_report report;
    ASSERT_EQ(hetpu_divisible_run(&job, &report), 0);
    expect_each_element_once(data);
    EXPECT_EQ(report.fixed_block, 128u);
    EXPECT_EQ(report.blocks, 4096u / 128);
}

TEST_F(Divisible, PlannerChoosesSizeAndWorkerOfEveryBlock)
{
    start("test-pinning");
    VectorJob data;
    hetpu_divisible_job job = make_job(data, 6400);
    hetpu_divisible_report report;
    ASSERT_EQ(hetpu_divisible_run(&job, &report), 0);
    expect_each_element_once(data);
    EXPECT_STREQ(report.planner, "test-pinning");
    EXPECT_EQ(report.fixed_block, 0u);
    for (unsigned i = 0; i < report.nworkers; ++i) {
        const hetpu_worker_report &w = report.workers[i];
        EXPECT_GT(w.blocks, 0u) << w.name;
        // Every block the worker ran had the size the planner chose for it (the final
        // block may be shorter).
        const uint64_t size = w.type == STARPU_CPU_WORKER ? 32 : 96;
        EXPECT_LE(w.elements, w.blocks * size) << w.name;
        EXPECT_GT(w.elements, (w.blocks - 1) * size) << w.name;
        EXPECT_EQ(PinningPlanner::ran_on[w.workerid], w.elements) << w.name;
        EXPECT_EQ(PinningPlanner::came_home[w.workerid], w.elements)
            << w.name << ": the planner hears once of every block's results in main memory";
    }
    EXPECT_EQ(PinningPlanner::untimed, 0) << "every block carries its profiled execution time";
    EXPECT_EQ(PinningPlanner::homes_out_of_order, 0) << "a block's homecoming follows its block_done";
}

namespace {

// When the first blocks were filled on the submitting thread and when any block began.
std::mutex first_mutex;
std::thread::id submitting_thread;
double last_first_fill_us = 0, first_start_us = -1;

void note_start()
{
    std::lock_guard<std::mutex> lock(first_mutex);
    const double now = starpu_timing_now();
    if (first_start_us < 0 || now < first_start_us)
        first_start_us = now;
}

void cpu_timed(void *buffers[], void *arg)
{
    note_start();
    add_one_cpu_func(buffers, arg);
}

void opencl_timed(void *buffers[], void *arg)
{
    note_start();
    add_one_opencl_func(buffers, arg);
}

// The submitting thread's fills after the first take 20 ms: long enough for an idle
// worker to start the first block meanwhile, were it not held off.
int fill_slowly_on_the_submitting_thread(void *arg, uint64_t offset, uint64_t count, struct starpu_task *task)
{
    if (std::this_thread::get_id() == submitting_thread && offset > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int rc = fill_add_one(arg, offset, count, task);
    if (std::this_thread::get_id() == submitting_thread) {
        std::lock_guard<std::mutex> lock(first_mutex);
        last_first_fill_us = starpu_timing_now();
    }
    return rc;
}

}  // namespace

// StarPU's idle workers poll their cores; where they fill the node the submitting thread
// gets a slice now and then, and a job's first blocks, planned to end together, would start
// milliseconds apart. They are queued before any of them starts.
TEST_F(Divisible, TheFirstBlocksAreAllQueuedBeforeAnyStarts)
{
    start("test-pinning");
    struct starpu_codelet timed = add_one_wrapped(cpu_timed, opencl_timed);
    ASSERT_TRUE(add_one_cpu_func && add_one_opencl_func) << "the test node has CPU and OpenCL implementations";
    submitting_thread = std::this_thread::get_id();
    last_first_fill_us = 0;
    first_start_us = -1;
    VectorJob data;
    data.codelet = &timed;
    hetpu_divisible_job job = make_job(data, 6400);
    job.fill_task = fill_slowly_on_the_submitting_thread;
    hetpu_divisible_report report;
    ASSERT_EQ(hetpu_divisible_run(&job, &report), 0);
    expect_each_element_once(data);
    ASSERT_GT(last_first_fill_us, 0.0);
    ASSERT_GT(first_start_us, 0.0);
    EXPECT_GE(first_start_us, last_first_fill_us)
        << "a block began " << (last_first_fill_us - first_start_us) * 1e-3
        << " ms before the submitting thread had filled the job's first blocks";
}

// With StarPU's cap on submitted tasks, a submission waits for running tasks to end: the
// workers are then not held off, or the first blocks would wait for each other forever.
// (A job of exactly its first blocks, two per worker: StarPU forbids that wait in the
// completion callbacks that submit later blocks, and says so by aborting; hetpu warns.)
TEST_F(Divisible, ACapOnSubmittedTasksDoesNotHangTheFirstBlocks)
{
    setenv("STARPU_LIMIT_MAX_SUBMITTED_TASKS", "2", 1);
    setenv("STARPU_LIMIT_MIN_SUBMITTED_TASKS", "1", 1);
    start("test-pinning");
    VectorJob data;
    hetpu_divisible_job job = make_job(data, 2 * (32 + 96));
    hetpu_divisible_report report;
    ::testing::internal::CaptureStderr();
    ASSERT_EQ(hetpu_divisible_run(&job, &report), 0);
    const std::string err = ::testing::internal::GetCapturedStderr();
    expect_each_element_once(data);
    EXPECT_EQ(report.blocks, 4u);
    EXPECT_NE(err.find("STARPU_LIMIT_MAX_SUBMITTED_TASKS=2"), std::string::npos)
        << "the user hears that the cap may abort a longer job: " << err;
}

TEST_F(Divisible, InvalidJobsAreRejectedWithEinval)
{
    start("greedy");
    VectorJob data;
    hetpu_divisible_job job = make_job(data, 1024);
    hetpu_divisible_job bad = job;
    bad.total = 0;
    EXPECT_EQ(hetpu_divisible_run(&bad, nullptr), -EINVAL);
    bad = job;
    bad.fill_task = nullptr;
    EXPECT_EQ(hetpu_divisible_run(&bad, nullptr), -EINVAL);
    bad = job;
    bad.default_block = 4096;
    EXPECT_EQ(hetpu_divisible_run(&bad, nullptr), -EINVAL) << "block larger than the problem";
    setenv("HETPU_BLOCK", "abc", 1);
    EXPECT_EQ(hetpu_divisible_run(&job, nullptr), -EINVAL);
    setenv("HETPU_BLOCK", "-5", 1);
    EXPECT_EQ(hetpu_divisible_run(&job, nullptr), -EINVAL);
}

TEST_F(Divisible, FillTaskErrorStopsTheRunWithoutHanging)
{
    start("greedy");
    VectorJob data;
    hetpu_divisible_job job = make_job(data, 4096);
    data.fail_from = 1024;
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(hetpu_divisible_run(&job, nullptr), -ENOMEM);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("add-one"), std::string::npos) << err;
    for (size_t i = 0; i < 1024; ++i)
        ASSERT_EQ(data.y[i], 1.0f) << "blocks before the failure were processed once";
}

TEST(DivisibleWithoutStarpu, RefusesToRun)
{
    VectorJob data;
    hetpu_divisible_job job = make_job(data, 16);
    EXPECT_EQ(hetpu_divisible_run(&job, nullptr), -EINVAL);
}
