// SPDX-License-Identifier: LGPL-2.1-or-later
// Withdrawn hand-outs through hetpu_divisible_run() on the test node (1 CPU + 1 OpenCL worker
// via PoCL): a block submitted to StarPU for the CPU worker, queued behind the CPU's running
// block, is taken back by the planner before the CPU pops it. Its range runs on the OpenCL
// worker instead, and the CPU, when it reaches the withdrawn task, runs nothing.
#include <hetpu/divisible.h>
#include <hetpu/hetpu.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <set>
#include <vector>

#include "runtime/divisible/core/planner_extensions.h"
#include "runtime/divisible/core/unit_queues.h"
#include "runtime/start/policy_registry.h"
#include "tests/integration/add_one_codelet.h"
#include "tests/integration/add_one_job.h"

namespace {

constexpr uint64_t kTotal = 4096, kBlock = 1024;

// The CPU worker's first task waits here until the planner has withdrawn the block behind
// it (or two minutes pass, so that a broken runner fails the test instead of hanging it);
// the OpenCL worker starts only once the CPU is held, so the withdrawal always comes first.
struct Gate {
    std::mutex mutex;
    std::condition_variable changed;
    bool entered = false, open = false;
    unsigned cpu_calls = 0;
};
Gate gate;
starpu_cpu_func_t add_one_cpu;
starpu_opencl_func_t add_one_opencl;

void cpu_behind_gate(void *buffers[], void *arg)
{
    {
        std::unique_lock<std::mutex> lock(gate.mutex);
        if (gate.cpu_calls++ == 0) {
            gate.entered = true;
            gate.changed.notify_all();
            gate.changed.wait_for(lock, std::chrono::minutes(2), [] { return gate.open; });
        }
    }
    add_one_cpu(buffers, arg);
}

void opencl_after_cpu(void *buffers[], void *arg)
{
    {
        std::unique_lock<std::mutex> lock(gate.mutex);
        gate.changed.wait_for(lock, std::chrono::minutes(2), [] { return gate.entered; });
    }
    add_one_opencl(buffers, arg);
}

struct starpu_codelet gated_codelet;

// Start: the CPU is handed two blocks, the OpenCL worker one, and the last block is promised
// to it. At the OpenCL worker's first completion the CPU's second block (not taken: the CPU
// is held in its first) is withdrawn and promised to the OpenCL worker, and the gate opens.
class WithdrawingPlanner : public hetpu::BlockPlanner, public hetpu::PlannerExtensions, public hetpu::QueuePlanner {
public:
    explicit WithdrawingPlanner(const std::vector<hetpu::PlannerWorker> &workers)
    {
        for (const auto &w : workers)
            (w.kind == hetpu::WorkerKind::Cpu ? cpu_ : opencl_) = w.id;
    }
    std::string name() const override { return "test-withdraw"; }
    bool assigns_workers() const override { return true; }
    uint64_t next_block(int, uint64_t) override { return 0; }
    void block_done(const hetpu::BlockDone &) override {}
    PlannerExtensions *extensions() override { return this; }
    void block_done_refitted(const hetpu::BlockDone &d, hetpu::PuRefit *) override { block_done(d); }
    QueuePlanner *queue_planner() override { return this; }
    // The OpenCL worker's blocks are short, the CPU's long: no copy at the tail is worth it on
    // the CPU (on a loaded machine an OpenCL block can run long enough that a copy on the idle
    // CPU would look worth it, and would run the CPU function a second time).
    double expected_s(int worker, uint64_t count) const override
    {
        return (worker == cpu_ ? 1.0 : 1e-9) * static_cast<double>(count);
    }
    double lead_s(int) const override { return 0; }

    void plan(hetpu::UnitQueues &q) override
    {
        if (!started_) {
            started_ = true;
            q.promise(cpu_, kBlock, false);
            q.promise(cpu_, kBlock, false);
            q.promise(opencl_, kBlock, false);
            q.promise(opencl_, kBlock, false);
            q.hand_out_next(cpu_);
            q.hand_out_next(cpu_);
            q.hand_out_next(opencl_);
            return;
        }
        if (!withdrew_ && q.can_revoke_last(cpu_)) {
            withdrew_ = q.revoke_last(cpu_);
            withdrawals += withdrew_ ? 1 : 0;
            q.promise(opencl_, q.unassigned(), false);
            std::lock_guard<std::mutex> lock(gate.mutex);
            gate.open = true;
            gate.changed.notify_all();
        }
        for (int w : {cpu_, opencl_})
            if (q.queue(w).empty() || !q.queue(w).front().handed)
                q.hand_out_next(w);
    }

    static inline std::atomic<unsigned> withdrawals{0};

private:
    int cpu_ = -1, opencl_ = -1;
    bool started_ = false, withdrew_ = false;
};

std::unique_ptr<hetpu::BlockPlanner> make_planner(const std::vector<hetpu::PlannerWorker> &workers,
                                                  const hetpu::BlockRules &)
{
    return std::make_unique<WithdrawingPlanner>(workers);
}

struct starpu_sched_policy test_withdraw_policy = [] {
    struct starpu_sched_policy p = *hetpu::find_builtin_policy("eager");
    p.policy_name = "test-withdraw";
    p.policy_description = "test only: eager + a planner that withdraws a block handed out";
    return p;
}();
HETPU_REGISTER_POLICY(test_withdraw_policy, make_planner);

}  // namespace

TEST(WithdrawnBlocks, AWithdrawnBlockRunsNothingAndItsRangeRunsOnceElsewhere)
{
    setenv("STARPU_SCHED", "test-withdraw", 1);
    ASSERT_EQ(hetpu_init(nullptr), 0);
    add_one_codelet_load();
    ASSERT_TRUE(add_one_codelet.opencl_funcs[0]) << "the test node has an OpenCL worker";
    add_one_cpu = add_one_codelet.cpu_funcs[0];
    add_one_opencl = add_one_codelet.opencl_funcs[0];
    gated_codelet = add_one_codelet;
    gated_codelet.cpu_funcs[0] = cpu_behind_gate;
    gated_codelet.opencl_funcs[0] = opencl_after_cpu;

    AddOneJob data;
    data.codelet = &gated_codelet;
    add_one_live_outputs = 0;
    add_one_discarded = 0;
    hetpu_divisible_job job = add_one_job(data, kTotal, true, "withdrawn-blocks", kBlock);
    hetpu_divisible_report report;
    const int rc = hetpu_divisible_run(&job, &report);
    {
        std::lock_guard<std::mutex> lock(gate.mutex);
        gate.open = true;
        gate.changed.notify_all();
    }
    hetpu_divisible_wait_copies();
    ASSERT_EQ(rc, 0);

    EXPECT_EQ(WithdrawingPlanner::withdrawals, 1u) << "the CPU's second block was still withdrawable";
    for (size_t i = 0; i < data.y.size(); ++i)
        ASSERT_EQ(data.y[i], 1.0f) << "element " << i;
    EXPECT_EQ(gate.cpu_calls, 1u) << "the withdrawn task ran its idle twin, not the CPU function";
    EXPECT_EQ(std::set<uint64_t>(data.committed.begin(), data.committed.end()).size(), data.committed.size())
        << "no range committed twice";
    EXPECT_EQ(report.elements, kTotal);
    EXPECT_EQ(add_one_live_outputs, 0) << "every private output committed or discarded, once";
    EXPECT_GE(add_one_discarded, 1) << "the withdrawn task's empty output is thrown away";

    add_one_codelet_unload();
    hetpu_shutdown();
    unsetenv("STARPU_SCHED");
}
