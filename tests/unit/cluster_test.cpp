// SPDX-License-Identifier: LGPL-2.1-or-later
// The pure parts of the multi-rank runner: recognising an MPI launch, one PU list for the
// planner, and the adapter that gives fixed-block planners a PU per block so that every
// rank is guaranteed blocks.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "runtime/core/block_dispatcher.h"
#include "runtime/core/cluster.h"

namespace hetpu {
namespace {

MpiLaunch detect(const std::map<std::string, std::string> &env)
{
    return detect_mpi_launch([&](const char *name) -> const char * {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    });
}

TEST(MpiLaunch, SingleProcessIsNotALaunch)
{
    EXPECT_FALSE(detect({}).launched);
    // A Slurm batch script has SLURM_NTASKS but is not an srun step.
    EXPECT_FALSE(detect({{"SLURM_NTASKS", "4"}, {"SLURM_JOB_ID", "12"}}).launched);
}

TEST(MpiLaunch, LaunchersAreRecognised)
{
    MpiLaunch l = detect({{"OMPI_COMM_WORLD_SIZE", "3"}});
    EXPECT_TRUE(l.launched);
    EXPECT_EQ(l.size, 3);
    EXPECT_EQ(l.variable, "OMPI_COMM_WORLD_SIZE");
    l = detect({{"PMI_SIZE", "2"}});
    EXPECT_TRUE(l.launched);
    EXPECT_EQ(l.size, 2);
    l = detect({{"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_NTASKS", "8"}});
    EXPECT_TRUE(l.launched);
    EXPECT_EQ(l.size, 8);
    l = detect({{"PMIX_RANK", "1"}});
    EXPECT_TRUE(l.launched);
    EXPECT_EQ(l.size, 1);  // PMIx gives no size in the environment
}

TEST(ClusterPus, PlannerSeesGlobalIdsAndUniqueNames)
{
    std::vector<ClusterPu> pus = {{0, 0, WorkerKind::Cpu, "CPU 0", "a"},
                                  {0, 1, WorkerKind::OpenCL, "OpenCL 0", "a"},
                                  {1, 0, WorkerKind::Cpu, "CPU 0", "b"}};
    std::vector<PlannerWorker> w = planner_workers(pus);
    ASSERT_EQ(w.size(), 3u);
    EXPECT_EQ(w[0].id, 0);
    EXPECT_EQ(w[2].id, 2);
    EXPECT_EQ(w[0].name, "r0:CPU 0");
    EXPECT_EQ(w[2].name, "r1:CPU 0");
    EXPECT_EQ(w[1].kind, WorkerKind::OpenCL);
    EXPECT_EQ(distinct_hosts(pus), 2u);
}

TEST(PerPuPlanner, EveryPuOfEveryRankGetsAFirstBlock)
{
    // 3 ranks x 2 workers; a fixed-block planner that would let the StarPU policy place
    // blocks now gets them handed to every PU, in the first wave.
    PerPuPlanner planner(std::make_unique<FixedBlockPlanner>(10));
    EXPECT_TRUE(planner.assigns_workers());
    EXPECT_EQ(planner.name(), "fixed");
    BlockRules rules{1000, 1, 1, "job"};
    ASSERT_NO_THROW(normalize_block_rules(rules));
    std::vector<int> ids = {0, 1, 2, 3, 4, 5};
    BlockDispatcher d(rules, planner, ids);
    std::vector<Assignment> first = d.start();
    std::set<int> got;
    for (size_t i = 0; i < ids.size() && i < first.size(); ++i)
        got.insert(first[i].worker);
    EXPECT_EQ(got.size(), ids.size()) << "the first |PUs| blocks go to distinct PUs";
    for (const Assignment &a : first)
        EXPECT_EQ(a.count, 10u);

    // A finished PU gets the next block (first idle served first).
    BlockDone done;
    done.worker = 4;
    done.offset = first[4].offset;
    done.count = first[4].count;
    std::vector<Assignment> next = d.complete(done);
    ASSERT_FALSE(next.empty());
    EXPECT_EQ(next.front().worker, 4);
}

TEST(WireFormat, DataTagsAreDistinctPerBlockAndBuffer)
{
    std::set<int64_t> tags;
    for (uint64_t seq = 0; seq < 100; ++seq)
        for (unsigned i = 0; i < 32; ++i)
            EXPECT_TRUE(tags.insert(block_data_tag(seq, i)).second);
}

}  // namespace
}  // namespace hetpu
