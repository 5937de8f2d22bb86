// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/manifest.h"
#include "tests/unit/thrown_message.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace hetpu::ckpt;
using hetpu::test::thrown;

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
            try {
                write_file_durably(dir, r.file, data[i].data(), data[i].size(), opts);
            } catch (const Error &e) {
                if (rc)
                    *rc = e.code();
                return data;
            }
            m.regions.push_back(r);
        }
        try {
            write_manifest(dir, m, opts);
        } catch (const Error &e) {
            if (rc)
                *rc = e.code();
        }
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
    const Manifest back = parse_manifest(text);
    EXPECT_EQ(back.name, "heat");
    EXPECT_EQ(back.version, 42);
    ASSERT_EQ(back.regions.size(), 1u);
    EXPECT_EQ(back.regions[0].checksum, 0xdeadbeefULL);
    // Every strict prefix (a torn write) is rejected.
    for (std::size_t cut = 0; cut < text.size(); ++cut) {
        const auto e = thrown<Error>([&] { parse_manifest(text.substr(0, cut)); });
        ASSERT_TRUE(e) << "prefix " << cut;
        EXPECT_EQ(e->code(), -EBADMSG) << "prefix " << cut;
        EXPECT_EQ(std::string(e->what()).rfind("manifest line ", 0), 0u) << e->what();
    }
    std::string edited = text;
    edited[edited.find("123")] = '9';
    const auto e = thrown<Error>([&] { parse_manifest(edited); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), -EBADMSG);
    EXPECT_STREQ(e->what(), "manifest line 0: self checksum mismatch (torn or edited manifest)");
}

TEST(ManifestText, NamesThatAreNotFileNamesAreRefused)
{
    EXPECT_NO_THROW(check_name("run_1.a-b", "checkpoint name"));
    EXPECT_THROW_MSG(check_name("a/b", "region name"), Error,
                     "region name 'a/b' contains '/' (use letters, digits, '_', '-', '.')");
    EXPECT_THROW_MSG(check_name("", "checkpoint name"), Error, "checkpoint name '' is empty");
    EXPECT_THROW_MSG(check_name("..", "checkpoint name"), Error, "checkpoint name '..' is '.' or '..'");
    EXPECT_THROW_MSG(check_name("has space", "checkpoint name"), Error, "contains ' '");
    const auto e = thrown<Error>([] { check_name(std::string(129, 'a'), "checkpoint name"); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), -EINVAL);
    EXPECT_NE(std::string(e->what()).find("is longer than 128 characters"), std::string::npos);
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
    char byte = 1;
    write_file_durably(dir, region_file_name("app", 5, 0), &byte, 1, {});
    EXPECT_EQ(latest_complete(dir, "app", false), 2) << "size checks catch v3, not v2's bit flip";
    EXPECT_EQ(latest_complete(dir, "app", true), 1) << "checksums catch v2";
    Manifest m = read_manifest(dir, "app", 2);
    std::vector<char> buf(m.regions[0].size);
    const auto e = thrown<Error>([&] { read_region(dir, m, 0, buf.data()); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), -EBADMSG);
    EXPECT_EQ(std::string(e->what()),
              "checksum mismatch in '" + dir + "/" + region_file_name("app", 2, 0) + "' (corrupted data)");
    m = read_manifest(dir, "app", 1);
    buf.resize(m.regions[0].size);
    read_region(dir, m, 0, buf.data());
    EXPECT_EQ(buf, d1[0]);
    const auto torn = thrown<Error>([&] { read_manifest(dir, "app", 4); });
    ASSERT_TRUE(torn);
    EXPECT_EQ(torn->code(), -EBADMSG);
    EXPECT_EQ(std::string(torn->what()).rfind(dir + "/" + manifest_file_name("app", 4) + ": manifest line ", 0), 0u)
        << torn->what();
    const auto missing = thrown<Error>([&] { read_manifest(dir, "app", 9); });
    ASSERT_TRUE(missing);
    EXPECT_EQ(missing->code(), -ENOENT);
    EXPECT_EQ(std::string(missing->what()),
              "no manifest '" + dir + "/" + manifest_file_name("app", 9) + "': No such file or directory");
}

TEST_F(TierDir, ErrorsNameThePathAndLeaveOlderVersionsIntact)
{
    write_version(1);
    char byte = 0;
    auto e = thrown<Error>([&] { write_file_durably(dir + "/missing", "x", &byte, 1, {}); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), -ENOENT);
    EXPECT_EQ(std::string(e->what()), "checkpoint directory missing (create it or fix the tier path) '" + dir +
                                          "/missing': No such file or directory");
    e = thrown<Error>([&] { write_file_durably(dir + "/" + manifest_file_name("app", 1), "x", &byte, 1, {}); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), -ENOTDIR);
    EXPECT_NE(std::string(e->what()).find("tier path is not a directory"), std::string::npos);
    std::vector<char> big(1000);
    e = thrown<Error>([&] { read_file_exact(dir + "/" + region_file_name("app", 1, 1), big.data(), big.size()); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), -EIO);
    EXPECT_NE(std::string(e->what()).find("file shorter than its manifest records"), std::string::npos);
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
    remove_version(dir, "app", 1);
    EXPECT_EQ(complete_versions(dir, "app", false), (std::vector<std::int64_t>{2}));
    struct stat st;
    EXPECT_NE(::stat((dir + "/" + region_file_name("app", 1, 0)).c_str(), &st), 0);
    EXPECT_EQ(::stat((dir + "/" + region_file_name("app", 2, 0)).c_str(), &st), 0);
}
