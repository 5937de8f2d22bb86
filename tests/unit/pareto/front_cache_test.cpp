// SPDX-License-Identifier: LGPL-2.1-or-later
// The on-disk front cache of the hepopta/htpopta policies: exact round trip, atomic
// replacement, and every kind of bad file ignored with one warning; then the planner
// reading a front back instead of searching.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "sched_policies/pareto/core/front_cache.h"
#include "sched_policies/pareto/core/pareto_planner.h"

using namespace hetpu;

namespace {

class FrontCacheTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        const char *tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/hetpu_front_cache_XXXXXX";
        ASSERT_NE(mkdtemp(&pattern[0]), nullptr);
        root_ = pattern;
        dir_ = root_ + "/fronts";  // not created yet: store() must create it
    }
    void TearDown() override { std::system(("rm -rf '" + root_ + "'").c_str()); }

    FrontCache cache()
    {
        return FrontCache(dir_, [this](const std::string &w) { warnings_.push_back(w); });
    }

    static FrontKey key()
    {
        FrontKey k;
        k.profile_path = "/home/u/.local/share/hetpu/profiles/matmul.csv";
        k.profile_hash = content_hash("processor,size,time_s,energy_j\ncpu0,64,0.1,1\n");
        k.workload = 4096;
        k.objective = EnergyObjective::Total;
        k.base_power_w = 37.5;
        k.processors = {"cpu0", "opencl0"};
        return k;
    }

    static CachedFront front()
    {
        CachedFront f;
        f.granule = 64;
        // Values that print with 17 significant digits; the round trip must be exact.
        Distribution a;
        a.sizes = {64, 0};
        a.time_s = 0.1 + 0.2;
        a.dynamic_energy_j = 1.0 / 3.0;
        a.total_energy_j = a.dynamic_energy_j + 37.5 * a.time_s;
        a.active = 1;
        Distribution b = a;
        b.sizes = {0, 64};
        b.time_s = 1e-7;
        b.dynamic_energy_j = 12345.678901234567;
        b.total_energy_j = 5e300;
        f.front = {a, b};
        return f;
    }

    std::string read(const std::string &path)
    {
        std::ifstream in(path, std::ios::binary);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }
    void write(const std::string &path, const std::string &text) { std::ofstream(path, std::ios::binary) << text; }

    // Loads `key()` from a file whose text is `text`; expects it ignored with one warning.
    void expect_ignored(const std::string &text, const std::string &reason)
    {
        ASSERT_TRUE(cache().store(key(), front()));
        write(cache().path_for(key()), text);
        warnings_.clear();
        CachedFront got;
        EXPECT_FALSE(cache().load(key(), got)) << reason;
        ASSERT_EQ(warnings_.size(), 1u) << reason;
        EXPECT_NE(warnings_[0].find(cache().path_for(key())), std::string::npos) << warnings_[0];
        EXPECT_NE(warnings_[0].find(reason), std::string::npos) << warnings_[0];
        EXPECT_EQ(warnings_[0].find('\n'), std::string::npos);
    }

    std::string root_, dir_;
    std::vector<std::string> warnings_;
};

}  // namespace

TEST_F(FrontCacheTest, MissingFileIsNotAWarning)
{
    CachedFront got;
    EXPECT_FALSE(cache().load(key(), got));
    EXPECT_TRUE(warnings_.empty());
}

TEST_F(FrontCacheTest, RoundTripIsExact)
{
    ASSERT_TRUE(cache().store(key(), front()));
    CachedFront got;
    ASSERT_TRUE(cache().load(key(), got));
    EXPECT_TRUE(warnings_.empty());
    const CachedFront want = front();
    EXPECT_EQ(got.granule, want.granule);
    ASSERT_EQ(got.front.size(), want.front.size());
    for (std::size_t i = 0; i < want.front.size(); ++i) {
        EXPECT_EQ(got.front[i].sizes, want.front[i].sizes);
        EXPECT_EQ(got.front[i].time_s, want.front[i].time_s);
        EXPECT_EQ(got.front[i].dynamic_energy_j, want.front[i].dynamic_energy_j);
        EXPECT_EQ(got.front[i].total_energy_j, want.front[i].total_energy_j);
        EXPECT_EQ(got.front[i].active, want.front[i].active);
    }
}

TEST_F(FrontCacheTest, EveryKeyFieldSelectsAnotherFile)
{
    ASSERT_TRUE(cache().store(key(), front()));
    std::vector<FrontKey> others(6, key());
    others[0].profile_path += "x";
    others[1].profile_hash ^= 1;
    others[2].workload += 64;
    others[3].objective = EnergyObjective::Dynamic;
    others[4].base_power_w = 37.25;
    others[5].processors = {"opencl0", "cpu0"};
    for (const FrontKey &k : others) {
        CachedFront got;
        EXPECT_NE(cache().path_for(k), cache().path_for(key()));
        EXPECT_FALSE(cache().load(k, got));
    }
    EXPECT_TRUE(warnings_.empty());
}

TEST_F(FrontCacheTest, BadFilesAreIgnoredWithOneLineWarning)
{
    FrontKey other = key();
    other.workload = 8192;
    ASSERT_TRUE(cache().store(other, front()));
    const std::string foreign = read(cache().path_for(other));  // a valid file, another key
    ASSERT_TRUE(cache().store(key(), front()));
    const std::string good = read(cache().path_for(key()));

    expect_ignored("", "not a hetpu front file");
    expect_ignored("garbage\x01\x02", "not a hetpu front file");
    std::string v2 = good;
    v2.replace(0, std::string("hetpu-front 1").size(), "hetpu-front 2");
    expect_ignored(v2, "format version 2");
    expect_ignored(foreign, "another profile");
    expect_ignored(good.substr(0, good.size() / 2 + 40), "corrupt");
    std::string no_end = good;
    no_end.resize(no_end.size() - 4);
    expect_ignored(no_end, "truncated");
    expect_ignored(good + "1 2 3\n", "trailing");
    std::string bad_number = good;
    bad_number.replace(bad_number.find("points 2"), 8, "points x");
    expect_ignored(bad_number, "corrupt header");
}

TEST_F(FrontCacheTest, StoreReplacesAtomicallyAndLeavesNoTemporaryFile)
{
    ASSERT_TRUE(cache().store(key(), front()));
    write(cache().path_for(key()), "garbage");
    CachedFront f = front();
    f.front.pop_back();
    ASSERT_TRUE(cache().store(key(), f));
    CachedFront got;
    ASSERT_TRUE(cache().load(key(), got));
    EXPECT_EQ(got.front.size(), 1u);
    DIR *d = opendir(dir_.c_str());
    ASSERT_NE(d, nullptr);
    int files = 0;
    while (dirent *e = readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") {
            ++files;
            EXPECT_EQ(std::string(e->d_name).find(".tmp"), std::string::npos) << e->d_name;
        }
    closedir(d);
    EXPECT_EQ(files, 1);
}

TEST_F(FrontCacheTest, UnwritableDirectoryWarnsAndFails)
{
    write(root_ + "/file", "x");
    FrontCache c(root_ + "/file/fronts", [this](const std::string &w) { warnings_.push_back(w); });
    EXPECT_FALSE(c.store(key(), front()));
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_NE(warnings_[0].find("not cached"), std::string::npos);
}

// The planner searches once, stores, and the next plan for the same key reads the file: a
// valid front planted under the key is what the next plan uses, a changed profile content
// is searched again.
TEST_F(FrontCacheTest, PlannerReadsTheFrontBackInsteadOfSearching)
{
    const std::string csv = "processor,size,time_s,energy_j\n"
                            "cpu0,64,0.4,1\ncpu0,128,0.8,2\ncpu0,192,1.2,3\n"
                            "opencl0,64,0.1,4\ncpu0,256,1.6,4\nopencl0,128,0.2,8\nopencl0,192,0.3,12\n"
                            "opencl0,256,0.4,16\n";
    const ProfileSet set = parse_profile_csv(csv, "job.csv");
    const std::vector<PlannerWorker> workers{{0, WorkerKind::Cpu, "CPU 0"}, {1, WorkerKind::OpenCL, "OpenCL 0"}};
    const FrontCache c = cache();
    ParetoPlanOptions o;
    o.tradeoff = parse_tradeoff("time");
    o.cache = &c;
    o.profile_path = "job.csv";
    o.profile_hash = content_hash(csv);
    const ParetoPlan first = make_pareto_plan(set, workers, BlockRules{256, 1, 1}, o);
    EXPECT_FALSE(first.cached);
    const ParetoPlan second = make_pareto_plan(set, workers, BlockRules{256, 1, 1}, o);
    EXPECT_TRUE(second.cached);
    EXPECT_EQ(second.shares, first.shares);
    EXPECT_EQ(second.front_size, first.front_size);
    EXPECT_TRUE(warnings_.empty());

    // Plant a one-point front (all on the CPU) under the same key: the plan must follow it.
    FrontKey k;
    k.profile_path = "job.csv";
    k.profile_hash = o.profile_hash;
    k.workload = 256;
    k.objective = EnergyObjective::Dynamic;
    k.processors = {"cpu0", "opencl0"};
    Distribution only;
    only.sizes = {4, 0};  // granules of 64
    only.time_s = 1.6;
    only.dynamic_energy_j = only.total_energy_j = 4;
    only.active = 1;
    ASSERT_TRUE(c.store(k, CachedFront{64, {only}}));
    const ParetoPlan planted = make_pareto_plan(set, workers, BlockRules{256, 1, 1}, o);
    EXPECT_TRUE(planted.cached);
    EXPECT_EQ(planted.shares, (std::vector<std::uint64_t>{256, 0}));

    // Another content hash is another key: searched again.
    o.profile_hash ^= 1;
    const ParetoPlan changed = make_pareto_plan(set, workers, BlockRules{256, 1, 1}, o);
    EXPECT_FALSE(changed.cached);
    EXPECT_EQ(changed.shares, first.shares);
}
