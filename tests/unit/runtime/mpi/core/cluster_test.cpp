// SPDX-License-Identifier: LGPL-2.1-or-later
// The pure parts of the multi-rank runner: recognising an MPI launch, one PU list for the
// planner, and the adapter that gives fixed-block planners a PU per block so that every
// rank is guaranteed blocks.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "runtime/divisible/core/block_dispatcher.h"
#include "runtime/mpi/core/cluster.h"

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
    EXPECT_FALSE(l.size_known);
    EXPECT_TRUE(detect({{"PMI_SIZE", "2"}}).size_known);
}

// A build without MPI must not refuse even a one-task launch (srun -n1 sets
// SLURM_STEP_NUM_TASKS=1, mpirun -np 1 sets OMPI_COMM_WORLD_SIZE=1).
TEST(LaunchDecision, OneTaskWithoutMpiRunsAsAPlainProcess)
{
    EXPECT_EQ(decide_launch(detect({{"SLURM_STEP_NUM_TASKS", "1"}}), false).mode, LaunchMode::Single);
    EXPECT_EQ(decide_launch(detect({{"OMPI_COMM_WORLD_SIZE", "1"}}), false).mode, LaunchMode::Single);
    EXPECT_EQ(decide_launch(detect({}), false).mode, LaunchMode::Single);
    EXPECT_EQ(decide_launch(detect({}), true).mode, LaunchMode::Single);
}

TEST(LaunchDecision, WithMpiEveryLaunchUsesMpi)
{
    EXPECT_EQ(decide_launch(detect({{"OMPI_COMM_WORLD_SIZE", "1"}}), true).mode, LaunchMode::Mpi);
    EXPECT_EQ(decide_launch(detect({{"PMI_SIZE", "4"}}), true).mode, LaunchMode::Mpi);
    EXPECT_EQ(decide_launch(detect({{"PMIX_RANK", "0"}}), true).mode, LaunchMode::Mpi);
}

TEST(LaunchDecision, SeveralTasksWithoutMpiAreRefusedWithTheFix)
{
    LaunchDecision d = decide_launch(detect({{"OMPI_COMM_WORLD_SIZE", "3"}}), false);
    EXPECT_EQ(d.mode, LaunchMode::RefuseSeveral);
    EXPECT_NE(d.message.find("built without MPI support (configure --without-mpi)"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("3 tasks (OMPI_COMM_WORLD_SIZE=3)"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("run one task, or rebuild with StarPU-MPI"), std::string::npos) << d.message;
    // PMIx alone gives no size: one of several copies must not run the whole job alone.
    d = decide_launch(detect({{"PMIX_RANK", "0"}}), false);
    EXPECT_EQ(d.mode, LaunchMode::RefuseSeveral);
    EXPECT_NE(d.message.find("unknown number of tasks (PMIX_RANK is set)"), std::string::npos) << d.message;
}

// Seen under a real Slurm: srun without --mpi (MpiDefault=none, Debian's default)
// starts tasks MPI cannot join (OpenMPI aborts in MPI_Init). One task is a plain run;
// several are refused with the fix; with a PMI plugin every launch uses MPI.
TEST(LaunchDecision, SrunWithoutPmiIsNoMpiLaunch)
{
    EXPECT_FALSE(detect({{"SLURM_STEP_NUM_TASKS", "1"}}).pmi);
    EXPECT_EQ(decide_launch(detect({{"SLURM_STEP_NUM_TASKS", "1"}, {"SLURM_PROCID", "0"}}), true).mode,
              LaunchMode::Single);
    LaunchDecision d = decide_launch(detect({{"SLURM_STEP_NUM_TASKS", "3"}}), true);
    EXPECT_EQ(d.mode, LaunchMode::RefuseSeveral);
    EXPECT_NE(d.message.find("srun started 3 tasks (SLURM_STEP_NUM_TASKS=3) without a PMI plugin"), std::string::npos)
        << d.message;
    EXPECT_NE(d.message.find("srun --mpi=pmix"), std::string::npos) << d.message;
    // srun --mpi=pmix sets PMIX_RANK, --mpi=pmi2 PMI_RANK and PMI_SIZE.
    EXPECT_EQ(decide_launch(detect({{"SLURM_STEP_NUM_TASKS", "3"}, {"PMIX_RANK", "1"}}), true).mode, LaunchMode::Mpi);
    EXPECT_EQ(decide_launch(detect({{"SLURM_STEP_NUM_TASKS", "1"}, {"PMIX_RANK", "0"}}), true).mode, LaunchMode::Mpi);
    EXPECT_EQ(decide_launch(detect({{"SLURM_STEP_NUM_TASKS", "2"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}), true).mode,
              LaunchMode::Mpi);
    // Without MPI support the old rules hold.
    EXPECT_EQ(decide_launch(detect({{"SLURM_STEP_NUM_TASKS", "1"}}), false).mode, LaunchMode::Single);
}

// Ranks given different options must not run different jobs.
TEST(JobMismatch, SameJobEverywhereIsQuiet)
{
    EXPECT_EQ(job_mismatch_message({"matmul n=256 seed=1", "matmul n=256 seed=1"}, "matmul"), "");
    EXPECT_EQ(job_mismatch_message({"x"}, "matmul"), "");
    EXPECT_EQ(job_mismatch_message({}, "matmul"), "");
}

TEST(JobMismatch, NamesTheFirstDifferingRankAndOption)
{
    EXPECT_EQ(
        job_mismatch_message(
            {"matmul n=256 seed=1", "matmul n=256 seed=1", "matmul n=512 seed=1", "matmul n=256 seed=2"}, "matmul"),
        "hetpu: matmul: rank 2 runs a different job than rank 0: n=512 instead of n=256 (give every rank the "
        "same options)\n");
    EXPECT_EQ(job_mismatch_message({"kmeans k=4 seed=1", "kmeans k=4 seed=7"}, "kmeans"),
              "hetpu: kmeans: rank 1 runs a different job than rank 0: seed=7 instead of seed=1 (give every rank "
              "the same options)\n");
    EXPECT_NE(job_mismatch_message({"grn k=2 lag=1", "grn k=2"}, "grn").find("(nothing) instead of lag=1"),
              std::string::npos);
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

TEST(JobMismatch, NamesTheRankAndTheFileWhoseDataDiffer)
{
    const std::string a = "kmeans k=4 data:/data/points.csv=00000000000000aa";
    // The same bytes under another name (each rank has its own copy): the same job.
    EXPECT_EQ(job_mismatch_message({a, "kmeans k=4 data:/scratch/points.csv=00000000000000aa"}, "kmeans"), "");
    const std::string msg =
        job_mismatch_message({a, a, "kmeans k=4 data:/scratch/my%20points.csv=00000000000000bb"}, "kmeans");
    EXPECT_NE(msg.find("hetpu: kmeans: rank 2 read different data than rank 0: its '/scratch/my points.csv' "
                       "(fingerprint 00000000000000bb) is not rank 0's '/data/points.csv'"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("give every rank the same input"), std::string::npos);
    // A rank that reads no file where rank 0 does.
    EXPECT_NE(job_mismatch_message({a, "kmeans k=4"}, "kmeans").find("rank 1 read different data"), std::string::npos);
    // Options are compared first: a different option is named as before.
    EXPECT_NE(job_mismatch_message({a, "kmeans k=5 data:/data/points.csv=00000000000000bb"}, "kmeans")
                  .find("k=5 instead of k=4"),
              std::string::npos);
}

}  // namespace
}  // namespace hetpu
