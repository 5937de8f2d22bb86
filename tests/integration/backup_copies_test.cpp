// SPDX-License-Identifier: LGPL-2.1-or-later
// Backup copies through hetpu_divisible_run() on the test node (1 CPU + 1 OpenCL worker via
// PoCL), forced by HETPU_BACKUP_ALL: every block runs twice, once on each worker, into
// private output, and only the first of the two to end is committed.
#include <hetpu/divisible.h>
#include <hetpu/hetpu.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runtime/divisible/core/planner_extensions.h"
#include "runtime/start/policy_registry.h"
#include "tests/integration/add_one_codelet.h"
#include "tests/integration/add_one_job.h"

namespace {

using CopyJob = AddOneJob;
std::atomic<int> &live_outputs = add_one_live_outputs;
std::atomic<int> &discarded = add_one_discarded;

hetpu_divisible_job make_job(CopyJob &data, uint64_t total, bool opt_in)
{
    return add_one_job(data, total, opt_in, "backup-copies", 64);
}

void expect_each_element_once(const CopyJob &data)
{
    for (size_t i = 0; i < data.y.size(); ++i)
        ASSERT_EQ(data.y[i], 1.0f) << "element " << i;
}

// 32 elements for the CPU worker, 96 for the OpenCL one (as in divisible_test.cpp).
class CopyPinningPlanner : public hetpu::BlockPlanner {
public:
    explicit CopyPinningPlanner(std::vector<hetpu::PlannerWorker> workers) : workers_(std::move(workers)) {}
    std::string name() const override { return "test-copies"; }
    bool assigns_workers() const override { return true; }
    uint64_t next_block(int worker, uint64_t) override
    {
        for (const auto &w : workers_)
            if (w.id == worker)
                return w.kind == hetpu::WorkerKind::Cpu ? 32 : 96;
        return 0;
    }

private:
    std::vector<hetpu::PlannerWorker> workers_;
};

std::unique_ptr<hetpu::BlockPlanner> make_copy_planner(const std::vector<hetpu::PlannerWorker> &workers,
                                                       const hetpu::BlockRules &)
{
    return std::make_unique<CopyPinningPlanner>(workers);
}

struct starpu_sched_policy test_copies_policy = [] {
    struct starpu_sched_policy p = *hetpu::find_builtin_policy("eager");
    p.policy_name = "test-copies";
    p.policy_description = "test only: eager + a planner that pins blocks (backup copies)";
    return p;
}();
HETPU_REGISTER_POLICY(test_copies_policy, make_copy_planner);

// The CPU worker's first task waits at this gate until the test opens it (or two minutes
// pass, so that a broken runner fails the test rather than hanging it).
struct Gate {
    std::mutex mutex;
    std::condition_variable changed;
    bool armed = false, entered = false, open = false, left = false;
};
Gate gate;
starpu_cpu_func_t add_one_cpu;

void cpu_behind_gate(void *buffers[], void *arg)
{
    {
        std::unique_lock<std::mutex> lock(gate.mutex);
        if (gate.armed && !gate.entered) {
            gate.entered = true;
            gate.changed.notify_all();
            gate.changed.wait_for(lock, std::chrono::minutes(2), [] { return gate.open; });
            gate.left = true;
        }
    }
    add_one_cpu(buffers, arg);
}

// The OpenCL worker waits (as long) until the CPU worker is at the gate, so that the job
// cannot end before the CPU has taken its first task, however the machine is loaded.
starpu_opencl_func_t add_one_opencl;

void opencl_after_gate(void *buffers[], void *arg)
{
    {
        std::unique_lock<std::mutex> lock(gate.mutex);
        if (gate.armed)
            gate.changed.wait_for(lock, std::chrono::minutes(2), [] { return gate.entered; });
    }
    add_one_opencl(buffers, arg);
}

class BackupCopies : public ::testing::Test {
protected:
    void start(const char *policy)
    {
        setenv("STARPU_SCHED", policy, 1);
        setenv("HETPU_BACKUP_ALL", "1", 1);
        ASSERT_EQ(hetpu_init(nullptr), 0);
        add_one_codelet_load();
        live_outputs = 0;
        discarded = 0;
    }
    void TearDown() override
    {
        {
            std::lock_guard<std::mutex> lock(gate.mutex);
            gate.open = true;
            gate.changed.notify_all();
        }
        hetpu_divisible_wait_copies();
        {
            std::lock_guard<std::mutex> lock(gate.mutex);
            gate.armed = false;
        }
        if (hetpu_policy_name())
            add_one_codelet_unload();
        hetpu_shutdown();
        unsetenv("STARPU_SCHED");
        unsetenv("HETPU_BACKUP_ALL");
        unsetenv("HETPU_BLOCK");
    }
};

}  // namespace

// Every block and its copy run (one on each worker); each range is committed once, every
// other output is discarded, and the result is the run's without copies.
TEST_F(BackupCopies, EachRangeIsCommittedOnceUnderAPlanner)
{
    start("test-copies");
    CopyJob data;
    hetpu_divisible_job job = make_job(data, 4096, true);
    hetpu_divisible_report report;
    ASSERT_EQ(hetpu_divisible_run(&job, &report), 0);
    expect_each_element_once(data);
    hetpu_divisible_wait_copies();
    EXPECT_EQ(data.filled_plain, 0u) << "with copies every block runs into private output";
    EXPECT_EQ(report.copies, report.blocks) << "HETPU_BACKUP_ALL: one copy per block";
    EXPECT_EQ(data.committed.size(), report.blocks);
    EXPECT_EQ(std::set<uint64_t>(data.committed.begin(), data.committed.end()).size(), data.committed.size())
        << "no range committed twice";
    EXPECT_EQ(static_cast<unsigned>(discarded), data.filled_private - report.blocks);
    EXPECT_EQ(live_outputs, 0) << "every private output is committed or discarded, once";
    EXPECT_EQ(report.elements, 4096u);
    uint64_t elements = 0;
    unsigned copies = 0;
    for (unsigned i = 0; i < report.nworkers; ++i) {
        elements += report.workers[i].elements;
        copies += report.workers[i].copies;
    }
    EXPECT_EQ(elements, 4096u) << "workers' elements count the kept tasks only";
    EXPECT_EQ(copies, report.copies);
    EXPECT_LE(report.copies_kept, report.copies);
    EXPECT_GE(report.copies_lost_s, 0.0);
}

// Under a StarPU policy (fixed blocks placed by eager) the copies are placed by StarPU too.
TEST_F(BackupCopies, EachRangeIsCommittedOnceUnderEager)
{
    setenv("HETPU_BLOCK", "128", 1);
    start("eager");
    CopyJob data;
    hetpu_divisible_job job = make_job(data, 4096, true);
    hetpu_divisible_report report;
    ASSERT_EQ(hetpu_divisible_run(&job, &report), 0);
    expect_each_element_once(data);
    hetpu_divisible_wait_copies();
    EXPECT_EQ(report.blocks, 4096u / 128);
    EXPECT_EQ(report.copies, report.blocks);
    EXPECT_EQ(data.committed.size(), report.blocks);
    EXPECT_EQ(live_outputs, 0);
}

TEST_F(BackupCopies, AJobThatDoesNotOptInNeverGetsACopy)
{
    start("test-copies");
    CopyJob data;
    hetpu_divisible_job job = make_job(data, 4096, false);
    hetpu_divisible_report report;
    ASSERT_EQ(hetpu_divisible_run(&job, &report), 0);
    expect_each_element_once(data);
    EXPECT_EQ(report.copies, 0u);
    EXPECT_EQ(data.filled_private, 0u);
    EXPECT_GT(data.filled_plain, 0u);
}

TEST_F(BackupCopies, HalfTheHooksAreRefused)
{
    start("test-copies");
    CopyJob data;
    hetpu_divisible_job job = make_job(data, 4096, true);
    job.discard = nullptr;
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(hetpu_divisible_run(&job, nullptr), -EINVAL);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("discard"), std::string::npos) << err;
}

// The CPU worker's block is held at the gate; its copy on the OpenCL worker ends first, so
// the job returns while the CPU block still runs. Only after the gate opens does it end,
// and its output is discarded.
TEST_F(BackupCopies, TheJobReturnsWhileALosingCopyStillRuns)
{
    start("test-copies");
    add_one_cpu = add_one_codelet.cpu_funcs[0];
    add_one_opencl = add_one_codelet.opencl_funcs[0];
    struct starpu_codelet gated = add_one_codelet;
    gated.cpu_funcs[0] = cpu_behind_gate;
    gated.opencl_funcs[0] = opencl_after_gate;
    ASSERT_TRUE(add_one_codelet.opencl_funcs[0]) << "the test node has an OpenCL worker";
    {
        std::lock_guard<std::mutex> lock(gate.mutex);
        gate.entered = gate.open = gate.left = false;
        gate.armed = true;
    }
    CopyJob data;
    data.codelet = &gated;
    // Two blocks, each with its copy on the other worker. The CPU worker's first task is
    // held at the gate, and the OpenCL worker starts only once it is: OpenCL ends every
    // range first, whichever tasks the dispatcher gave each worker.
    hetpu_divisible_job job = make_job(data, 32 + 96, true);
    hetpu_divisible_report report;
    ASSERT_EQ(hetpu_divisible_run(&job, &report), 0);
    bool held_at_return;
    {
        std::lock_guard<std::mutex> lock(gate.mutex);
        held_at_return = gate.entered && !gate.left;
    }
    expect_each_element_once(data);
    EXPECT_TRUE(held_at_return) << "the job returned with the CPU's block still running";
    EXPECT_EQ(data.committed.size(), 2u);
    EXPECT_EQ(report.copies, 2u) << "one copy of each block";
    EXPECT_EQ(report.elements, 128u);
    // Everything the CPU worker holds (the task at the gate, the one queued behind it) loses.
    const unsigned running = report.copies_running;
    EXPECT_GE(running, 1u);
    for (unsigned i = 0; i < report.nworkers; ++i) {
        if (report.workers[i].type == STARPU_CPU_WORKER) {
            EXPECT_EQ(report.workers[i].elements, 0u) << "nothing of the held CPU worker was kept";
        }
    }
    EXPECT_EQ(live_outputs, static_cast<int>(running)) << "the losers' outputs live until they end";

    {
        std::lock_guard<std::mutex> lock(gate.mutex);
        gate.open = true;
        gate.changed.notify_all();
    }
    hetpu_divisible_wait_copies();
    EXPECT_EQ(live_outputs, 0);
    EXPECT_EQ(discarded, static_cast<int>(running));
    expect_each_element_once(data);  // the losers wrote only their own output
}
