// SPDX-License-Identifier: LGPL-2.1-or-later
// The hepopta/htpopta planner: worker naming, the chosen point per trade-off, and a whole
// divisible run through the dispatcher giving one block per chosen worker.
#include <gtest/gtest.h>

#include <map>

#include "runtime/divisible/core/block_dispatcher.h"
#include "sched_policies/pareto/core/pareto_planner.h"
#include "tests/unit/thrown_message.h"

using namespace hetpu;

namespace {

std::vector<PlannerWorker> node()
{
    return {
        {0, WorkerKind::Cpu, "CPU 0"}, {1, WorkerKind::OpenCL, "OpenCL 0 (pthread)"}, {2, WorkerKind::Cpu, "CPU 1"}};
}

// cpu0: slow and frugal, opencl0: fast and hungry (linear in the size, every multiple of 64
// up to 1024 measured). cpu1 is not profiled.
ProfileSet profiles()
{
    std::string csv = "processor,size,time_s,energy_j,energy_source\n";
    for (int x = 64; x <= 1024; x += 64) {
        csv +=
            "cpu0," + std::to_string(x) + "," + std::to_string(x * 0.004) + "," + std::to_string(x * 0.01) + ",model\n";
        csv += "opencl0," + std::to_string(x) + "," + std::to_string(x * 0.001) + "," + std::to_string(x * 0.05) +
               ",model\n";
    }
    csv += "cuda0,64,0.0001,1,model\n";
    return parse_profile_csv(csv, "matmul.csv");
}

ParetoPlan plan_for(const char *tradeoff, std::uint64_t total = 1024)
{
    ParetoPlanOptions o;
    o.tradeoff = parse_tradeoff(tradeoff);
    return make_pareto_plan(profiles(), node(), BlockRules{total, 1, 1}, o);
}

}  // namespace

TEST(ParetoPlanner, NamesWorkersByKindAndRank)
{
    std::vector<PlannerWorker> w = node();
    w.push_back({5, WorkerKind::Cuda, "CUDA 0"});
    EXPECT_EQ(processor_names(w), (std::vector<std::string>{"cpu0", "opencl0", "cpu1", "cuda0"}));
}

TEST(ParetoPlanner, TradeoffMovesWorkBetweenTheFastAndTheFrugalProcessor)
{
    const ParetoPlan fast = plan_for("time"), cheap = plan_for("energy"), mid = plan_for("slowdown<=50%");
    for (const ParetoPlan *p : {&fast, &cheap, &mid}) {
        ASSERT_EQ(p->shares.size(), 3u);
        EXPECT_EQ(p->shares[0] + p->shares[1] + p->shares[2], 1024u);
        EXPECT_EQ(p->shares[2], 0u);  // cpu1 has no profile
        EXPECT_EQ(p->front_size, fast.front_size);
    }
    // Energy-optimal: everything on the frugal CPU. Time-optimal: balanced 4:1 in favour of
    // the device that is 4x faster (204.8 elements on the CPU at best, rounded to sizes of 64).
    EXPECT_EQ(cheap.shares[0], 1024u);
    EXPECT_EQ(cheap.chosen_index, 0u);
    EXPECT_EQ(fast.chosen_index, fast.front_size - 1);
    EXPECT_EQ(fast.shares[0], 192u);
    EXPECT_LT(fast.chosen.time_s, cheap.chosen.time_s);
    EXPECT_GT(fast.chosen.dynamic_energy_j, cheap.chosen.dynamic_energy_j);
    EXPECT_LE(mid.chosen.time_s, 1.5 * fast.chosen.time_s);
    EXPECT_LE(mid.chosen.dynamic_energy_j, fast.chosen.dynamic_energy_j);
    EXPECT_GE(mid.chosen.dynamic_energy_j, cheap.chosen.dynamic_energy_j);
    // Notes name the unprofiled worker and the profile without a worker.
    std::string notes;
    for (const auto &n : fast.notes)
        notes += n + "\n";
    EXPECT_NE(notes.find("CPU 1 (cpu1) has no profile"), std::string::npos) << notes;
    EXPECT_NE(notes.find("'cuda0' matches no worker"), std::string::npos) << notes;
}

TEST(ParetoPlanner, NoPlanWhenTheJobCannotBeFormedOrNothingMatches)
{
    ParetoPlanOptions o;
    EXPECT_THROW_MSG(make_pareto_plan(profiles(), node(), BlockRules{1000, 1, 1}, o), UnreachableWorkloadError,
                     "the job's 1000 elements cannot be formed from the profiled sizes; calibrate sizes that add up "
                     "to it");
    std::vector<PlannerWorker> other = {{0, WorkerKind::Cuda, "CUDA 0"}, {1, WorkerKind::Cuda, "CUDA 1"}};
    EXPECT_THROW_MSG(make_pareto_plan(parse_profile_csv("processor,size,time_s,energy_j\ncpu0,1,1,1\n", "x.csv"), other,
                                      BlockRules{1, 1, 1}, o),
                     std::runtime_error, "no profiled processor is among this run's workers (2 workers");
    // Shares must respect the job's granule.
    EXPECT_THROW_MSG(make_pareto_plan(profiles(), node(), BlockRules{1024, 128, 128}, o), std::runtime_error,
                     "is not a multiple of the job's granule 128");
}

TEST(ParetoPlanner, DispatcherRunsOneBlockPerChosenWorkerCoveringTheJob)
{
    const ParetoPlan plan = plan_for("time");
    ParetoPlanner planner("hepopta", node(), plan.shares);
    EXPECT_TRUE(planner.assigns_workers());
    BlockDispatcher d(BlockRules{1024, 1, 1}, planner, {0, 1, 2});
    std::vector<Assignment> todo = d.start();
    std::map<int, std::uint64_t> got;
    std::uint64_t covered = 0;
    while (!todo.empty()) {
        Assignment a = todo.back();
        todo.pop_back();
        EXPECT_EQ(got.count(a.worker), 0u) << "worker " << a.worker << " got a second block";
        got[a.worker] += a.count;
        covered += a.count;
        BlockDone done;
        done.worker = a.worker;
        done.offset = a.offset;
        done.count = a.count;
        for (const Assignment &next : d.complete(done))
            todo.push_back(next);
    }
    EXPECT_TRUE(d.finished());
    EXPECT_FALSE(d.forced_remainder());
    EXPECT_EQ(covered, 1024u);
    EXPECT_EQ(got[0], plan.shares[0]);
    EXPECT_EQ(got[1], plan.shares[1]);
    EXPECT_EQ(got.count(2), 0u);
}
