// SPDX-License-Identifier: LGPL-2.1-or-later
// The apps' JSON line: matmul's keys in order, null for what was not measured, the app's
// own fields before the workers, and per-worker totals summed over several jobs.
#include "apps/common/app_record.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

using namespace hetpu::apps;

TEST(AppRecord, JsonLineKeysNullsAndExtras)
{
    AppRecord r;
    r.app = "grn";
    r.policy = "dmda";
    r.block = 100;
    r.planner = "fixed";
    r.rep = 1;
    r.makespan_s = 0.5;
    r.workers.push_back({0, "CPU", "CPU 0", 3, 300, 0.25, 0.0});
    r.extra = {{"genes", 40}, {"edge_recall", 1.0}};
    EXPECT_EQ(json_line(r),
              "{\"app\":\"grn\",\"policy\":\"dmda\",\"precision\":\"double\",\"block\":100,\"planner\":\"fixed\","
              "\"rep\":1,\"makespan_s\":0.5,\"gflops\":null,\"verified\":null,\"genes\":40,\"edge_recall\":1.0,"
              "\"workers\":[{\"id\":0,\"type\":\"CPU\",\"name\":\"CPU 0\",\"blocks\":3,\"elements\":300,"
              "\"busy_s\":0.25,\"transfer_s\":0.0}]}");
    r.gflops = 2.5;
    r.verified = Verified::Failed;
    r.extra = nullptr;
    const std::string line = json_line(r);
    EXPECT_NE(line.find("\"gflops\":2.5,\"verified\":false,\"workers\""), std::string::npos) << line;
}

TEST(AppRecord, NumbersRoundTripAndNonFiniteIsNull)
{
    AppRecord r;
    r.makespan_s = 0.1 + 0.2;  // 0.30000000000000004: a short format would lose the last bit
    r.extra = {{"inertia", std::nan("")}, {"seed", UINT64_MAX}, {"name", "OpenCL 0 (\"pocl\")"}};
    const hetpu::JsonRecord j = hetpu::JsonRecord::parse(json_line(r));
    EXPECT_EQ(j["makespan_s"].get<double>(), 0.1 + 0.2);
    EXPECT_TRUE(j["inertia"].is_null());
    EXPECT_EQ(j["seed"].get<uint64_t>(), UINT64_MAX);
    EXPECT_EQ(j["name"], "OpenCL 0 (\"pocl\")");
}

// Every rank has a "CPU 0" with StarPU id 0; the record's ids must still be unique.
TEST(AppRecord, WorkerIdsAreUniqueAcrossRanks)
{
    AppRecord r;
    r.ranks = 3;
    r.workers.push_back({0, "CPU", "CPU 0", 3, 96, 0.25, 0.0, 0, "a"});
    r.workers.push_back({1, "OpenCL", "OpenCL 0", 1, 32, 0.25, 0.0, 0, "a"});
    r.workers.push_back({0, "CPU", "CPU 0", 2, 64, 0.25, 0.0, 1, "b"});
    r.workers.push_back({0, "CPU", "CPU 0", 2, 64, 0.25, 0.0, 2, "c"});
    const hetpu::JsonRecord j = hetpu::JsonRecord::parse(json_line(r));
    ASSERT_EQ(j["workers"].size(), 4u);
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(j["workers"][i]["id"], i) << j["workers"][i];
        EXPECT_EQ(j["workers"][i]["local_id"], r.workers[i].id) << j["workers"][i];
        EXPECT_EQ(j["workers"][i]["rank"], r.workers[i].rank) << j["workers"][i];
    }
    r.ranks = 1;  // a single process keeps StarPU's ids, and no local_id
    r.workers.resize(2);
    r.workers[0].id = 5;
    const hetpu::JsonRecord one = hetpu::JsonRecord::parse(json_line(r));
    EXPECT_EQ(one["workers"][0]["id"], 5);
    EXPECT_FALSE(one["workers"][0].contains("local_id"));
}

TEST(AppRecord, WorkerLinesNameRanksOnlyWhenSeveral)
{
    AppRecord r;
    r.workers.push_back({0, "CPU", "CPU 0", 3, 96, 0.25, 0.0, 1, "node7"});
    std::string s = worker_lines(r, "columns");
    EXPECT_NE(s.find("worker  0 CPU"), std::string::npos) << s;
    EXPECT_NE(s.find("columns         96"), std::string::npos) << s;
    EXPECT_EQ(s.find("node7"), std::string::npos) << s;
    r.ranks = 2;
    s = worker_lines(r, "columns");
    EXPECT_NE(s.find("rank 1 (node7)"), std::string::npos) << s;
}

TEST(AppRecord, WorkersAccumulateById)
{
    std::vector<WorkerRecord> total;
    accumulate_workers(total, {{0, "CPU", "CPU 0", 2, 20, 1.0, 0.0}, {1, "OpenCL", "ocl", 1, 10, 0.5, 0.1}});
    accumulate_workers(total, {{1, "OpenCL", "ocl", 3, 30, 1.5, 0.2}, {0, "CPU", "CPU 0", 1, 5, 0.5, 0.0}});
    ASSERT_EQ(total.size(), 2u);
    EXPECT_EQ(total[0].blocks, 3u);
    EXPECT_EQ(total[0].elements, 25u);
    EXPECT_DOUBLE_EQ(total[0].busy_s, 1.5);
    EXPECT_EQ(total[1].blocks, 4u);
    EXPECT_EQ(total[1].elements, 40u);
    EXPECT_DOUBLE_EQ(total[1].transfer_s, 0.1 + 0.2);
}

TEST(AppRecord, MultiRankRecordsCarryThePlanningAndEveryRank)
{
    AppRecord r;
    r.ranks = 2;
    r.mpi.planner = "per-node";
    r.mpi.moves = 3;
    r.mpi.coordinator_s = 0.001;
    r.mpi.shares_s = 0.02;
    RankTotals a;
    a.rank = 0;
    a.host = "n0";
    a.share_count = 60;
    a.elements = 180;  // three jobs of 60
    a.app_bytes_sent = 4096;
    RankTotals b = a;
    b.rank = 1;
    b.host = "n1";
    b.share_offset = 60;
    b.app_bytes_sent = 0;
    b.app_bytes_received = 4096;
    b.longest_silence_s = 2.5;
    r.mpi.ranks = {a, b};
    const hetpu::JsonRecord j = hetpu::JsonRecord::parse(json_line(r));
    EXPECT_EQ(j["mpi_planner"], "per-node");
    EXPECT_EQ(j["moves"], 3);
    EXPECT_DOUBLE_EQ(j["shares_s"].get<double>(), 0.02);
    ASSERT_EQ(j["rank_reports"].size(), 2u);
    EXPECT_EQ(j["rank_reports"][1]["share"], hetpu::JsonRecord({60, 60}));
    EXPECT_EQ(j["rank_reports"][0]["elements"], 180);
    EXPECT_EQ(j["rank_reports"][1]["app_bytes_received"], 4096);
    EXPECT_DOUBLE_EQ(j["rank_reports"][1]["longest_silence_s"].get<double>(), 2.5);
    r.ranks = 1;
    const hetpu::JsonRecord one = hetpu::JsonRecord::parse(json_line(r));
    EXPECT_FALSE(one.contains("mpi_planner"));
    EXPECT_FALSE(one.contains("rank_reports"));
}
