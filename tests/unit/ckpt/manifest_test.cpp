// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/manifest.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace hetpu::ckpt;

namespace {

class TierDir : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/hetpu-ckpt-manifest.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override { std::system(("rm -rf '" + dir + "'").c_str()); }

    // Writes version v of "app" with two regions filled from v; returns the data.
    std::vector<std::vector<char>> write_version(std::int64_t v, const WriteOptions &opts = {}, int *rc = nullptr)
    {
        std::vector<std::vector<char>> data = {std::vector<char>(1000 + v, char('a' + v % 20)),
                                               std::vector<char>(77, char(v))};
        Manifest m;
        m.name = "app";
        m.version = v;
        for (std::size_t i = 0; i < data.size(); ++i) {
            RegionRecord r{"r" + std::to_string(i), data[i].size(), checksum_of(data[i].data(), data[i].size()),
                           region_file_name("app", v, i)};
            std::string err;
            int w = write_file_durably(dir, r.file, data[i].data(), data[i].size(), opts, &err);
            if (w) {
                if (rc)
                    *rc = w;
                return data;
            }
            m.regions.push_back(r);
        }
        std::string err;
        int w = write_manifest(dir, m, opts, &err);
        if (rc)
            *rc = w;
        return data;
    }

    std::string dir;
};

void truncate_file(const std::string &path, off_t size) { ASSERT_EQ(::truncate(path.c_str(), size), 0); }

}  // namespace

TEST(ManifestText, RoundTripsAndDetectsTearing)
{
    Manifest m;
    m.name = "heat";
    m.version = 42;
    m.regions.push_back({"u", 123, 0xdeadbeefULL, "heat.v42.0.dat"});
    const std::string text = serialize(m);
    Manifest back;
    std::string err;
    ASSERT_EQ(parse_manifest(text, &back, &err), 0) << err;
    EXPECT_EQ(back.name, "heat");
    EXPECT_EQ(back.version, 42);
    ASSERT_EQ(back.regions.size(), 1u);
    EXPECT_EQ(back.regions[0].checksum, 0xdeadbeefULL);
    // Every strict prefix (a torn write) is rejected.
    for (std::size_t cut = 0; cut < text.size(); ++cut)
        EXPECT_EQ(parse_manifest(text.substr(0, cut), &back, &err), -EBADMSG) << "prefix " << cut;
    std::string edited = text;
    edited[edited.find("123")] = '9';
    EXPECT_EQ(parse_manifest(edited, &back, &err), -EBADMSG);
    EXPECT_NE(err.find("checksum"), std::string::npos);
}

TEST(ManifestText, NamesThatAreNotFileNamesAreRefused)
{
    EXPECT_EQ(invalid_name_reason("run_1.a-b"), "");
    EXPECT_NE(invalid_name_reason("a/b"), "");
    EXPECT_NE(invalid_name_reason(""), "");
    EXPECT_NE(invalid_name_reason(".."), "");
    EXPECT_NE(invalid_name_reason("has space"), "");
}

TEST_F(TierDir, LatestSkipsTornAndPartialVersions)
{
    auto d1 = write_version(1);
    write_version(2);
    write_version(3);
    write_version(4);
    EXPECT_EQ(complete_versions(dir, "app", true), (std::vector<std::int64_t>{1, 2, 3, 4}));
    // v4: manifest torn; v3: a data file shorter than recorded; v2: data corrupted in place.
    truncate_file(dir + "/" + manifest_file_name("app", 4), 30);
    truncate_file(dir + "/" + region_file_name("app", 3, 0), 10);
    {
        std::fstream f(dir + "/" + region_file_name("app", 2, 0), std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(5);
        f.put('X');
    }
    // A version whose data landed but whose manifest never did does not exist.
    std::string err;
    char byte = 1;
    ASSERT_EQ(write_file_durably(dir, region_file_name("app", 5, 0), &byte, 1, {}, &err), 0);
    EXPECT_EQ(latest_complete(dir, "app", false), 2) << "size checks catch v3, not v2's bit flip";
    EXPECT_EQ(latest_complete(dir, "app", true), 1) << "checksums catch v2";
    Manifest m;
    ASSERT_EQ(read_manifest(dir, "app", 2, &m, &err), 0);
    std::vector<char> buf(m.regions[0].size);
    EXPECT_EQ(read_region(dir, m, 0, buf.data(), &err), -EBADMSG);
    EXPECT_NE(err.find("checksum mismatch"), std::string::npos);
    ASSERT_EQ(read_manifest(dir, "app", 1, &m, &err), 0);
    buf.resize(m.regions[0].size);
    ASSERT_EQ(read_region(dir, m, 0, buf.data(), &err), 0) << err;
    EXPECT_EQ(buf, d1[0]);
}

TEST_F(TierDir, ErrorsNameThePathAndLeaveOlderVersionsIntact)
{
    write_version(1);
    std::string err;
    char byte = 0;
    EXPECT_EQ(write_file_durably(dir + "/missing", "x", &byte, 1, {}, &err), -ENOENT);
    EXPECT_NE(err.find(dir + "/missing"), std::string::npos);
    EXPECT_EQ(write_file_durably(dir + "/" + manifest_file_name("app", 1), "x", &byte, 1, {}, &err), -ENOTDIR);
    // Full disk, simulated by a tier capacity just above what v1 occupies.
    WriteOptions small;
    small.simulated_capacity = directory_bytes(dir) + 500;
    int rc = 0;
    write_version(2, small, &rc);
    EXPECT_EQ(rc, -ENOSPC);
    EXPECT_EQ(complete_versions(dir, "app", true), (std::vector<std::int64_t>{1}));
    // No temporary files left behind.
    EXPECT_EQ(std::system(("ls -a '" + dir + "' | grep -q tmp").c_str()) != 0, true);
}

TEST_F(TierDir, RemoveVersionDropsManifestAndData)
{
    write_version(1);
    write_version(2);
    std::string err;
    ASSERT_EQ(remove_version(dir, "app", 1, &err), 0) << err;
    EXPECT_EQ(complete_versions(dir, "app", false), (std::vector<std::int64_t>{2}));
    struct stat st;
    EXPECT_NE(::stat((dir + "/" + region_file_name("app", 1, 0)).c_str(), &st), 0);
    EXPECT_EQ(::stat((dir + "/" + region_file_name("app", 2, 0)).c_str(), &st), 0);
}
