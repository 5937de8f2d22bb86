// SPDX-License-Identifier: LGPL-2.1-or-later
// DiskTier alone: one directory tier of the checkpoint chain, without an engine.
#include "ckpt_backend/engine/disk_tier.h"

#include "ckpt_backend/core/ckpt_error.h"
#include "tests/unit/thrown_message.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace hetpu::ckpt;

namespace {

class DiskTierTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/hetpu-disk-tier.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        root = tmpl;
        ASSERT_EQ(::mkdir((root + "/a").c_str(), 0755), 0);
        ASSERT_EQ(::mkdir((root + "/b").c_str(), 0755), 0);
    }
    void TearDown() override { std::system(("rm -rf '" + root + "'").c_str()); }

    // Writes version `v` of "app" (two regions of distinct bytes) complete on `tier`.
    static Manifest put(const DiskTier &tier, std::int64_t v)
    {
        Manifest m;
        m.name = "app";
        m.version = v;
        for (std::size_t i = 0; i < 2; ++i) {
            const std::string bytes(1000 + i, static_cast<char>('a' + v + i));
            RegionRecord r;
            r.region = "r" + std::to_string(i);
            r.size = bytes.size();
            r.checksum = checksum_of(bytes.data(), bytes.size());
            r.file = region_file_name(m.name, v, i);
            tier.write_region(r.file, bytes.data(), bytes.size());
            m.regions.push_back(r);
        }
        write_manifest(tier.dir(), m, tier.options());
        return m;
    }

    std::string root;
};

TEST_F(DiskTierTest, CopiesAVersionWithItsManifestAndChecksums)
{
    DiskTier a("first tier", root + "/a", {}, 0), b("second tier", root + "/b", {}, 0);
    a.open(true);
    b.open(false);
    const Manifest m = put(a, 3);
    EXPECT_FALSE(latest_complete(b.dir(), "app", false));
    b.copy_version(a, m);
    ASSERT_EQ(latest_complete(b.dir(), "app", true), std::optional<std::int64_t>(3));
    std::string back(1001, '\0');
    read_region(b.dir(), read_manifest(b.dir(), "app", 3), 1, back.data());
    EXPECT_EQ(back, std::string(1001, static_cast<char>('a' + 3 + 1)));
}

TEST_F(DiskTierTest, RetentionKeepsTheNewestAndWhatIsStillNeeded)
{
    DiskTier a("first tier", root + "/a", {}, 0);
    a.open(true);
    for (std::int64_t v = 1; v <= 5; ++v)
        put(a, v);
    // Keep 2; version 1 is still needed (its copy to the next tier has not run).
    a.apply_retention("app", 2, [](std::int64_t v) { return v == 1; });
    EXPECT_EQ(complete_versions(a.dir(), "app", false), (std::vector<std::int64_t>{1, 4, 5}));
    a.apply_retention("app", 0, [](std::int64_t) { return false; });  // 0: keep all
    EXPECT_EQ(complete_versions(a.dir(), "app", false).size(), 3u);
}

TEST_F(DiskTierTest, RemovesRegionFilesWithoutAManifest)
{
    DiskTier a("first tier", root + "/a", {}, 0);
    a.open(true);
    put(a, 1);
    const std::string torn(10, 'x');
    a.write_region(region_file_name("app", 2, 0), torn.data(), torn.size());
    EXPECT_EQ(orphan_versions(a.dir(), "app"), std::vector<std::int64_t>{2});
    a.remove_orphans("app");
    EXPECT_TRUE(orphan_versions(a.dir(), "app").empty());
    EXPECT_EQ(complete_versions(a.dir(), "app", true), std::vector<std::int64_t>{1});
}

TEST_F(DiskTierTest, OpenNamesTheTierAndRefusesASecondExclusiveHolder)
{
    DiskTier missing("burst tier", root + "/none", {}, 0);
    const auto e = hetpu::test::thrown<Error>([&] { missing.open(false); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), -ENOENT);
    EXPECT_NE(std::string(e->what()).find("burst tier directory"), std::string::npos) << e->what();

    DiskTier first("local tier", root + "/a", {}, 0), second("local tier", root + "/a", {}, 0);
    first.open(true);
    const auto busy = hetpu::test::thrown<Error>([&] { second.open(true); });
    ASSERT_TRUE(busy);
    EXPECT_EQ(busy->code(), -EBUSY) << busy->what();
}

}  // namespace
