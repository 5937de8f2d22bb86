// SPDX-License-Identifier: LGPL-2.1-or-later
// The SQLite ledger: round trip, reports, clear errors, and the two properties a shared
// ledger needs — concurrent writer processes all land, and a writer killed with SIGKILL at
// any instant leaves no partial job.
#include <gtest/gtest.h>

#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "accounting_hook/core/ledger.h"

using namespace hetpu::accounting;
namespace fs = std::filesystem;

namespace {

class LedgerTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/hetpu-ledger-test.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
        path = dir + "/sub/ledger.sqlite";  // the directory is created on demand
    }
    void TearDown() override { fs::remove_all(dir); }
    std::string dir, path;
};

JobRecord job(const std::string &user, const std::string &app, double su)
{
    JobRecord j;
    j.user = user;
    j.host = "n1";
    j.app = app;
    j.policy = "dmda";
    j.partition = "work";
    j.fraction_source = "process";
    j.cores = 2, j.fc = 0.125, j.weight = 16, j.wall_s = 3.5, j.su = su;
    j.energy_j = 10;
    j.energy_source = "model";
    j.workers = {{"cpu", 1, 40, 1.5, 6, "model", 6}, {"opencl", 1, 10, 1.0, 4, "model", 4}};
    return j;
}

long long scalar(const std::string &path, const char *sql)
{
    sqlite3 *db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt *s = nullptr;
    long long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

}  // namespace

TEST(LedgerPath, FollowsHetpuLedgerThenHetpuHomeThenXdgThenHome)
{
    auto env = [](std::map<std::string, std::string> m) {
        return [m](const char *n) -> const char * {
            auto it = m.find(n);
            return it == m.end() ? nullptr : it->second.c_str();
        };
    };
    EXPECT_EQ(default_ledger_path(env({{"HETPU_LEDGER", "/x/l.db"}, {"HOME", "/h"}})), "/x/l.db");
    // Setting only HETPU_HOME (a test's, a benchmark's) moves the ledger too.
    EXPECT_EQ(default_ledger_path(env({{"HETPU_HOME", "/t/home"}, {"XDG_DATA_HOME", "/d"}, {"HOME", "/h"}})),
              "/t/home/ledger.sqlite");
    EXPECT_EQ(default_ledger_path(env({{"HETPU_LEDGER", "/x/l.db"}, {"HETPU_HOME", "/t/home"}})), "/x/l.db");
    EXPECT_EQ(default_ledger_path(env({{"XDG_DATA_HOME", "/d"}, {"HOME", "/h"}})), "/d/hetpu/ledger.sqlite");
    EXPECT_EQ(default_ledger_path(env({{"HOME", "/h"}})), "/h/.local/share/hetpu/ledger.sqlite");
}

TEST_F(LedgerTest, RecordsAJobWithItsWorkerRowsAndReadsThemBack)
{
    long long id;
    {
        Ledger l(path);
        id = l.record(job("ada", "matmul", 0.25));
        EXPECT_GT(id, 0);
    }
    Ledger r(path, /*read_only=*/true);
    auto jobs = r.jobs();
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].id, id);
    EXPECT_EQ(jobs[0].app, "matmul");
    EXPECT_DOUBLE_EQ(jobs[0].su, 0.25);
    EXPECT_FALSE(jobs[0].gco2e);
    ASSERT_EQ(jobs[0].workers.size(), 2u);
    EXPECT_EQ(jobs[0].workers[0].worker_type, "cpu");
    EXPECT_EQ(jobs[0].workers[0].tasks, 40);
    EXPECT_EQ(jobs[0].workers[1].energy_source, "model");
    EXPECT_EQ(r.integrity_check(), "ok");
    EXPECT_EQ(scalar(path, "PRAGMA user_version"), ledger_schema_version);
    EXPECT_EQ(scalar(path, "SELECT COUNT(*) FROM pragma_journal_mode WHERE journal_mode='wal'"), 1);
}

TEST_F(LedgerTest, TotalsByUserPartitionAppAndSince)
{
    Ledger l(path);
    JobRecord old = job("bob", "kmeans", 5);
    old.recorded_at = "2020-01-01T00:00:00Z";
    l.record(old);
    l.record(job("ada", "matmul", 1));
    l.record(job("ada", "fft2d", 2));
    auto by_user = l.totals("user");
    ASSERT_EQ(by_user.size(), 2u);
    EXPECT_EQ(by_user[0].key, "bob");
    EXPECT_DOUBLE_EQ(by_user[0].su, 5);
    EXPECT_EQ(by_user[1].jobs, 2);
    EXPECT_DOUBLE_EQ(by_user[1].su, 3);
    auto recent = l.totals("user", "2021-06-01");
    ASSERT_EQ(recent.size(), 1u);
    EXPECT_EQ(recent[0].key, "ada");
    EXPECT_EQ(l.totals("app", "2021-06-01 12:00").size(), 2u);
    EXPECT_EQ(l.jobs("2021-01-01").size(), 2u);
    EXPECT_THROW(l.totals("host"), LedgerError);
    EXPECT_THROW(l.jobs("last week"), LedgerError);
    EXPECT_EQ(normalise_since("2026-11-21"), "2026-11-21T00:00:00Z");
    EXPECT_EQ(normalise_since("2026-11-21T10:05"), "2026-11-21T10:05:00Z");
    EXPECT_EQ(normalise_since("2026-11-21 10:05:07Z"), "2026-11-21T10:05:07Z");
}

TEST_F(LedgerTest, SinceFiltersOnWhenTheRunStartedNotWhenItEnded)
{
    Ledger l(path);
    JobRecord before = job("bob", "long", 5);  // started 09:00, ended 11:00
    before.recorded_at = "2026-11-21T11:00:00Z";
    before.wall_s = 7200;
    l.record(before);
    JobRecord at = job("ada", "short", 1);  // started exactly at 10:00
    at.recorded_at = "2026-11-21T10:30:00Z";
    at.wall_s = 1800;
    l.record(at);
    JobRecord given = job("eve", "given", 2);  // a record with its own start
    given.started_at = "2026-11-21T10:15:00Z";
    given.recorded_at = "2026-11-21T12:00:00Z";
    l.record(given);
    const std::vector<JobRecord> jobs = l.jobs("2026-11-21T10:00");
    ASSERT_EQ(jobs.size(), 2u);  // the 09:00 run ended after 10:00 but started before it
    EXPECT_EQ(jobs[0].app, "short");
    EXPECT_EQ(jobs[0].started_at, "2026-11-21T10:00:00Z");
    EXPECT_EQ(jobs[1].started_at, "2026-11-21T10:15:00Z");
    EXPECT_EQ(l.totals("user", "2026-11-21T10:00").size(), 2u);
    EXPECT_EQ(l.jobs("2026-11-21T10:00:01").size(), 1u);
    EXPECT_EQ(l.jobs("2026-11-21T09:00").size(), 3u);
    // A run recorded now starts its wall time ago.
    JobRecord now = job("ada", "now", 1);
    now.wall_s = 3 * 86400;
    l.record(now);
    const std::string three_days_ago = l.jobs().back().started_at;
    EXPECT_LT(three_days_ago, utc_now_iso().substr(0, 10));
}

TEST_F(LedgerTest, CorruptLedgerIsAClearError)
{
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << std::string(8192, 'x');
    try {
        Ledger l(path);
        FAIL() << "opened a corrupt ledger";
    } catch (const LedgerError &e) {
        std::string m = e.what();
        EXPECT_NE(m.find(path), std::string::npos) << m;
        EXPECT_NE(m.find("corrupt"), std::string::npos) << m;
        EXPECT_NE(m.find("HETPU_LEDGER"), std::string::npos) << m;
    }
}

TEST_F(LedgerTest, UnwritableLedgerIsAClearError)
{
    // A plain file where the directory should be: unwritable even for root.
    fs::create_directories(dir);
    std::ofstream(dir + "/afile") << "x";
    try {
        Ledger l(dir + "/afile/ledger.sqlite");
        FAIL() << "created a ledger under a file";
    } catch (const LedgerError &e) {
        std::string m = e.what();
        EXPECT_NE(m.find("afile/ledger.sqlite"), std::string::npos) << m;
        EXPECT_NE(m.find("HETPU_LEDGER"), std::string::npos) << m;
    }
    if (geteuid() != 0) {
        fs::create_directories(dir + "/ro");
        chmod((dir + "/ro").c_str(), 0500);
        EXPECT_THROW(Ledger(dir + "/ro/ledger.sqlite"), LedgerError);
        chmod((dir + "/ro").c_str(), 0700);
    }
}

TEST_F(LedgerTest, NewerSchemaIsRefusedNotMangled)
{
    {
        Ledger l(path);
    }
    sqlite3 *db;
    sqlite3_open(path.c_str(), &db);
    sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    try {
        Ledger l(path);
        FAIL();
    } catch (const LedgerError &e) {
        EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
    }
    EXPECT_THROW(Ledger(dir + "/missing.sqlite", true), LedgerError);
}

TEST_F(LedgerTest, ConcurrentWriterProcessesAllLand)
{
    constexpr int writers = 4, jobs_each = 25;
    std::vector<pid_t> pids;
    for (int w = 0; w < writers; ++w) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            try {
                // Every writer opens the (possibly not yet created) ledger itself.
                Ledger l(path);
                for (int i = 0; i < jobs_each; ++i)
                    l.record(job("user" + std::to_string(w), "app", 1));
            } catch (const std::exception &e) {
                fprintf(stderr, "writer %d: %s\n", w, e.what());
                _exit(1);
            }
            _exit(0);
        }
        pids.push_back(pid);
    }
    for (pid_t pid : pids) {
        int status = 0;
        waitpid(pid, &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    Ledger l(path, true);
    EXPECT_EQ(l.jobs().size(), static_cast<size_t>(writers * jobs_each));
    for (const LedgerTotals &t : l.totals("user"))
        EXPECT_EQ(t.jobs, jobs_each) << t.key;
    EXPECT_EQ(scalar(path, "SELECT COUNT(*) FROM job_workers"), writers * jobs_each * 2);
}

TEST_F(LedgerTest, WriterKilledAtAnyInstantLeavesNoPartialJob)
{
    {
        Ledger l(path);
    }
    for (int round = 0; round < 6; ++round) {
        // The child says when its first job is in, so each round kills a writer that is
        // recording (not one still opening the ledger, as a loaded machine could make it).
        int ready[2];
        ASSERT_EQ(pipe(ready), 0);
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            close(ready[0]);
            Ledger l(path);
            l.record(job("k", "loop", 1));
            const char one = 1;
            if (write(ready[1], &one, 1) != 1)
                _exit(1);
            for (;;)
                l.record(job("k", "loop", 1));
        }
        close(ready[1]);
        char byte = 0;
        ASSERT_EQ(read(ready[0], &byte, 1), 1) << "the writer died before its first job";
        close(ready[0]);
        // The kill then lands at a varying point inside the writes that follow.
        std::this_thread::sleep_for(std::chrono::milliseconds(3 + 7 * round));
        kill(pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        ASSERT_TRUE(WIFSIGNALED(status));
    }
    Ledger l(path);  // a later job opens and writes normally
    l.record(job("after", "x", 1));
    EXPECT_EQ(l.integrity_check(), "ok");
    EXPECT_GT(scalar(path, "SELECT COUNT(*) FROM jobs"), 6);
    // Every job row has exactly the worker rows it announced, and no worker row is orphaned.
    EXPECT_EQ(scalar(path, "SELECT COUNT(*) FROM jobs j WHERE j.worker_rows !="
                           " (SELECT COUNT(*) FROM job_workers w WHERE w.job_id = j.id)"),
              0);
    EXPECT_EQ(scalar(path, "SELECT COUNT(*) FROM job_workers WHERE job_id NOT IN (SELECT id FROM jobs)"), 0);
}

// Per-device share rows, and a version-1 ledger (before them) stays readable and
// is migrated by the first writer.
namespace {

JobRecord shared_job(const std::string &device, double su, double share_h, int peers)
{
    JobRecord j = job("ada", "matmul", su);
    j.policy = "mgb";
    j.gpu_share = "use";
    j.fg_allocated = 0.5;
    j.fg = 0.25;
    j.devices = {{device, peers, 1.0, 0.2, share_h, share_h, 3600, 1800 * share_h, "nvml", std::nullopt, std::nullopt}};
    return j;
}

// The version-1 schema, as older hetpu wrote it (no share rows).
const char *v1_schema =
    "CREATE TABLE jobs ( id INTEGER PRIMARY KEY AUTOINCREMENT, recorded_at TEXT NOT NULL, user TEXT NOT NULL,"
    " host TEXT NOT NULL, app TEXT NOT NULL, policy TEXT NOT NULL, partition TEXT NOT NULL,"
    " fraction_source TEXT NOT NULL, slurm_job_id TEXT NOT NULL, nodes INTEGER NOT NULL, cores REAL NOT NULL,"
    " gpus REAL NOT NULL, mem_gib REAL NOT NULL, fc REAL NOT NULL, fg REAL NOT NULL, fm REAL NOT NULL,"
    " weight REAL NOT NULL, wall_s REAL NOT NULL, su REAL NOT NULL, energy_j REAL NOT NULL,"
    " energy_source TEXT NOT NULL, gco2e REAL, worker_rows INTEGER NOT NULL);"
    "CREATE TABLE job_workers ( job_id INTEGER NOT NULL REFERENCES jobs(id), worker_type TEXT NOT NULL,"
    " workers INTEGER NOT NULL, tasks INTEGER NOT NULL, busy_s REAL NOT NULL, energy_j REAL NOT NULL,"
    " energy_source TEXT NOT NULL, model_energy_j REAL NOT NULL, PRIMARY KEY (job_id, worker_type));"
    "INSERT INTO jobs VALUES (1, '2026-11-01T00:00:00Z', 'bob', 'n1', 'old', 'dmda', 'work', 'process', '', 1,"
    " 2, 1, 1, 0.125, 0.25, 0.1, 16, 10, 2.5, 99, 'model', NULL, 0);"
    "PRAGMA user_version=1;";

}  // namespace

TEST_F(LedgerTest, DeviceSharesRoundTripAndTotalByDevice)
{
    Ledger l(path);
    l.record(shared_job("opencl:0:0", 2.0, 0.5, 1));
    l.record(shared_job("opencl:0:0", 1.0, 0.25, 2));
    JobRecord split = shared_job("opencl:0:1", 4.0, 1.0, 0);
    split.devices[0].device_from_j = 5000.5;  // split at the counter's readings
    split.devices[0].device_to_j = 8600.5;
    l.record(split);
    l.record(job("ada", "plain", 1.0));
    const std::vector<JobRecord> jobs = l.jobs();
    ASSERT_EQ(jobs.size(), 4u);
    EXPECT_EQ(jobs[0].gpu_share, "use");
    EXPECT_DOUBLE_EQ(jobs[0].fg_allocated, 0.5);
    ASSERT_EQ(jobs[0].devices.size(), 1u);
    EXPECT_EQ(jobs[0].devices[0].device, "opencl:0:0");
    EXPECT_EQ(jobs[0].devices[0].peers, 1);
    EXPECT_DOUBLE_EQ(jobs[0].devices[0].share_h, 0.5);
    EXPECT_EQ(jobs[0].devices[0].energy_source, "nvml");
    EXPECT_FALSE(jobs[0].devices[0].device_from_j);
    ASSERT_TRUE(jobs[2].devices[0].device_from_j && jobs[2].devices[0].device_to_j);
    EXPECT_DOUBLE_EQ(*jobs[2].devices[0].device_from_j, 5000.5);
    EXPECT_DOUBLE_EQ(*jobs[2].devices[0].device_to_j, 8600.5);
    EXPECT_TRUE(jobs[3].devices.empty());
    EXPECT_EQ(jobs[3].gpu_share, "allocation");
    const std::vector<DeviceTotals> t = l.device_totals();
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t[0].device, "opencl:0:0");
    EXPECT_EQ(t[0].jobs, 2);
    EXPECT_EQ(t[0].shared_jobs, 2);
    EXPECT_DOUBLE_EQ(t[0].share_h, 0.75);
    EXPECT_DOUBLE_EQ(t[0].su, 3.0);  // one device per job: all of each job's SU
    EXPECT_EQ(t[1].shared_jobs, 0);
}

TEST_F(LedgerTest, AVersionOneLedgerIsReadAsItIsAndMigratedByAWriter)
{
    fs::create_directories(fs::path(path).parent_path());
    sqlite3 *db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, v1_schema, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    {
        const Ledger reader(path, /*read_only=*/true);
        EXPECT_EQ(reader.schema_version(), 1);
        const std::vector<JobRecord> jobs = reader.jobs();
        ASSERT_EQ(jobs.size(), 1u);
        EXPECT_EQ(jobs[0].app, "old");
        EXPECT_EQ(jobs[0].gpu_share, "allocation");
        EXPECT_DOUBLE_EQ(jobs[0].fg_allocated, 0.25);  // fg was the allocation then
        EXPECT_TRUE(reader.device_totals().empty());
        EXPECT_EQ(scalar(path, "PRAGMA user_version"), 1);  // a reader changes nothing
    }
    {
        Ledger writer(path);
        EXPECT_EQ(writer.schema_version(), ledger_schema_version);
        writer.record(shared_job("cuda:0000:3b:00.0", 1.0, 0.5, 1));
    }
    EXPECT_EQ(scalar(path, "PRAGMA user_version"), ledger_schema_version);
    const Ledger reader(path, true);
    const std::vector<JobRecord> jobs = reader.jobs();
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_EQ(jobs[0].app, "old");  // the old row survived the migration
    EXPECT_DOUBLE_EQ(jobs[0].su, 2.5);
    EXPECT_EQ(jobs[0].started_at, "2026-10-31T23:59:50Z");  // its end less its 10 s
    EXPECT_EQ(reader.jobs("2026-11-01").size(), 1u);        // the new one only
    ASSERT_EQ(jobs[1].devices.size(), 1u);
    EXPECT_EQ(reader.integrity_check(), "ok");
}
