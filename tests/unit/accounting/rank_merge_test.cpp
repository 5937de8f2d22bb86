// SPDX-License-Identifier: LGPL-2.1-or-later
// One ledger row per multi-rank job: merging the ranks' records.
#include <gtest/gtest.h>

#include "accounting_hook/core/rank_merge.h"

namespace hetpu::accounting {
namespace {

JobRecord rank_record(const std::string &host, double su, double energy, double wall, double cores)
{
    JobRecord j;
    j.user = "u";
    j.host = host;
    j.app = "matmul";
    j.policy = "plb-hac";
    j.partition = "node";
    j.fraction_source = "process";
    j.cores = cores;
    j.fc = cores / 8;
    j.weight = 2;
    j.wall_s = wall;
    j.su = su;
    j.energy_j = energy;
    j.energy_source = "model";
    j.workers.push_back({"cpu", 1, 10, 0.5, energy, "model", energy});
    return j;
}

TEST(RankMerge, WireRoundTrip)
{
    JobRecord j = rank_record("a", 1.5, 20, 3, 2);
    j.gco2e = 4.25;
    JobRecord back = from_wire(to_wire(j));
    EXPECT_EQ(back.host, "a");
    EXPECT_DOUBLE_EQ(back.su, 1.5);
    ASSERT_TRUE(back.gco2e.has_value());
    EXPECT_DOUBLE_EQ(*back.gco2e, 4.25);
    ASSERT_EQ(back.workers.size(), 1u);
    EXPECT_EQ(back.workers[0].tasks, 10);
    EXPECT_THROW(from_wire("{\"user\": 1}"), std::invalid_argument);
}

TEST(RankMerge, SumsOverRanksAndNamesEachRanksWorkers)
{
    std::vector<JobRecord> ranks = {rank_record("a", 1, 10, 3, 2), rank_record("a", 2, 30, 5, 2),
                                    rank_record("b", 4, 60, 4, 1)};
    ranks[2].energy_source = "rapl+model";
    JobRecord m = merge_rank_records(ranks, 2);
    EXPECT_EQ(m.nodes, 2);
    EXPECT_DOUBLE_EQ(m.su, 7);
    EXPECT_DOUBLE_EQ(m.energy_j, 100);
    EXPECT_DOUBLE_EQ(m.wall_s, 5);
    EXPECT_DOUBLE_EQ(m.cores, 2.5);  // 5 cores held over 2 nodes
    EXPECT_EQ(m.host, "a,b");
    EXPECT_EQ(m.energy_source, "model+rapl");
    ASSERT_EQ(m.workers.size(), 3u);
    EXPECT_EQ(m.workers[0].worker_type, "rank0/cpu");
    EXPECT_EQ(m.workers[2].worker_type, "rank2/cpu");
    double busy = 0;
    for (const auto &w : m.workers)
        busy += w.busy_s;
    EXPECT_DOUBLE_EQ(busy, 1.5);
}

TEST(RankMerge, SlurmAllocationChargedOnceByTaskZero)
{
    std::vector<JobRecord> ranks = {rank_record("a", 8, 10, 3, 16), rank_record("b", 0, 10, 3, 16)};
    for (auto &r : ranks) {
        r.fraction_source = "slurm";
        r.slurm_job_id = "42";
        r.nodes = 2;
    }
    JobRecord m = merge_rank_records(ranks, 2);
    EXPECT_DOUBLE_EQ(m.su, 8);
    EXPECT_DOUBLE_EQ(m.cores, 16);  // the allocation's per-node figure, not a sum
    EXPECT_EQ(m.nodes, 2);
}

// Seen under a real Slurm (srun --mpi=pmix -n 3 on one node): the ranks but task 0
// record "slurm task N (charged by task 0)"; their holdings were added to task 0's, so the
// row said 6 cores and 9 GiB of a 2-core, 3 GiB allocation; and its SU was task 0's over
// task 0's wall time, not the job's (the longest rank's) that the row records.
TEST(RankMerge, EveryTaskOfASlurmJobHoldsTheAllocationNotAShare)
{
    std::vector<JobRecord> ranks = {rank_record("vm", 2, 10, 3, 2), rank_record("vm", 0, 10, 3, 2),
                                    rank_record("vm", 0, 10, 3, 2)};
    for (size_t r = 0; r < ranks.size(); ++r) {
        ranks[r].fraction_source = r == 0 ? "slurm" : "slurm task " + std::to_string(r) + " (charged by task 0)";
        ranks[r].slurm_job_id = "4";
        ranks[r].nodes = 1;
        ranks[r].mem_gib = 3;
    }
    ranks[2].wall_s = 4;  // rank 2 ran longest: the job's wall time, at task 0's rate
    JobRecord m = merge_rank_records(ranks, 1);
    EXPECT_DOUBLE_EQ(m.wall_s, 4);
    EXPECT_DOUBLE_EQ(m.su, 2.0 / 3 * 4);
    EXPECT_DOUBLE_EQ(m.cores, 2);
    EXPECT_DOUBLE_EQ(m.fc, ranks[0].fc);
    EXPECT_DOUBLE_EQ(m.mem_gib, 3);
    EXPECT_EQ(m.fraction_source, "slurm");
}

}  // namespace
}  // namespace hetpu::accounting
