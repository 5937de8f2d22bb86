// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/engine/config.h"

#include <gtest/gtest.h>

#include <cerrno>

using namespace hetpu::ckpt;

TEST(CkptConfig, ReadsEveryKey)
{
    const char *text = R"(
versions_to_keep = 3
checksums = false
flush_threads = 2
eviction = "fifo"
prefetch = false
[host]
size = "8MiB"
incremental_init = false
[local]
path = "/tmp/x"
capacity = 1000
drop_page_cache = true
[remote]
path = "/tmp/y"
capacity = "1G"
)";
    EngineConfig c;
    std::string err;
    ASSERT_EQ(parse_config(text, "t.toml", &c, &err), 0) << err;
    EXPECT_EQ(c.versions_to_keep, 3);
    EXPECT_FALSE(c.checksums);
    EXPECT_EQ(c.flush_threads, 2);
    EXPECT_EQ(c.eviction, EvictionPolicy::Fifo);
    EXPECT_FALSE(c.prefetch);
    EXPECT_EQ(c.host_bytes, 8u << 20);
    EXPECT_FALSE(c.host_incremental_init);
    EXPECT_EQ(c.local_dir, "/tmp/x");
    EXPECT_EQ(c.local_capacity, 1000u);
    EXPECT_TRUE(c.drop_page_cache);
    EXPECT_EQ(c.remote_dir, "/tmp/y");
    EXPECT_EQ(c.remote_capacity, 1ull << 30);
}

TEST(CkptConfig, ErrorsNameTheKeyAndLine)
{
    EngineConfig c;
    std::string err;
    EXPECT_EQ(parse_config("[local]\npath = \"/tmp\"\n\nflush_thread = 2\n", "a.toml", &c, &err), -EINVAL);
    // flush_thread lands in [local] here: still an unknown key, on line 4.
    EXPECT_NE(err.find("a.toml:4"), std::string::npos) << err;
    EXPECT_NE(err.find("flush_thread"), std::string::npos) << err;
    EXPECT_EQ(parse_config("flush_threads = 0\n[local]\npath = \"/tmp\"\n", "b.toml", &c, &err), -EINVAL);
    EXPECT_NE(err.find("b.toml:1"), std::string::npos) << err;
    EXPECT_EQ(parse_config("[host]\nsize = \"12 furlongs\"\n[local]\npath = \"/tmp\"\n", "c.toml", &c, &err), -EINVAL);
    EXPECT_NE(err.find("unknown unit"), std::string::npos) << err;
    EXPECT_EQ(parse_config("eviction = \"lru\"\n[local]\npath = \"/tmp\"\n", "d.toml", &c, &err), -EINVAL);
    EXPECT_NE(err.find("lru"), std::string::npos) << err;
    EXPECT_EQ(parse_config("checksums = true\n", "e.toml", &c, &err), -EINVAL);
    EXPECT_NE(err.find("[local] path is required"), std::string::npos) << err;
    EXPECT_EQ(parse_config("x = = 1\n", "f.toml", &c, &err), -EINVAL);
    EXPECT_NE(err.find("f.toml:1"), std::string::npos) << err;
    EXPECT_EQ(load_config_file("/nonexistent/ckpt.toml", &c, &err), -ENOENT);
    EXPECT_NE(err.find("/nonexistent/ckpt.toml"), std::string::npos) << err;
}

TEST(CkptConfig, SizesWithUnits)
{
    std::uint64_t v = 0;
    std::string why;
    ASSERT_TRUE(parse_size("4096", &v, &why));
    EXPECT_EQ(v, 4096u);
    ASSERT_TRUE(parse_size("3KiB", &v, &why));
    EXPECT_EQ(v, 3072u);
    ASSERT_TRUE(parse_size("2 G", &v, &why));
    EXPECT_EQ(v, 2ull << 30);
    EXPECT_FALSE(parse_size("MiB", &v, &why));
}

// Sizes that do not fit 64 bits are errors with a message, not std::out_of_range("stoull")
// (20 digits) nor a silent wrap (17179869184G = 2^64 bytes, which wrapped to 0, "the file
// system's capacity").
TEST(CkptConfig, SizesTooLargeAreErrors)
{
    std::uint64_t v = 7;
    std::string why;
    EXPECT_FALSE(parse_size("99999999999999999999", &v, &why));
    EXPECT_NE(why.find("too large"), std::string::npos) << why;
    EXPECT_FALSE(parse_size("17179869184G", &v, &why));
    EXPECT_NE(why.find("too large"), std::string::npos) << why;
    EXPECT_EQ(v, 7u) << "a refused size leaves the output alone";
    ASSERT_TRUE(parse_size("18446744073709551615", &v, &why)) << why;
    EXPECT_EQ(v, 18446744073709551615ull);
    ASSERT_TRUE(parse_size("17179869183G", &v, &why)) << why;
    EXPECT_EQ(v, 17179869183ull << 30);

    EngineConfig c;
    std::string err;
    EXPECT_EQ(parse_config("[local]\npath = \"/tmp\"\ncapacity = \"99999999999999999999\"\n", "g.toml", &c, &err),
              -EINVAL);
    EXPECT_NE(err.find("g.toml:3: local.capacity: '99999999999999999999' is too large"), std::string::npos) << err;
}

// A float where an integer is expected is a type error, not toml++'s float-to-integer
// conversion (undefined behaviour for 1e30).
TEST(CkptConfig, FloatsWhereIntegersBelongAreErrors)
{
    EngineConfig c;
    std::string err;
    EXPECT_EQ(parse_config("[local]\npath = \"/tmp\"\ncapacity = 1e30\n", "h.toml", &c, &err), -EINVAL);
    EXPECT_NE(err.find("h.toml:3: local.capacity must be a size"), std::string::npos) << err;
    EXPECT_EQ(parse_config("flush_threads = 2.0\n[local]\npath = \"/tmp\"\n", "i.toml", &c, &err), -EINVAL);
    EXPECT_NE(err.find("i.toml:1: flush_threads must be an integer"), std::string::npos) << err;
}

TEST(CkptConfig, ADirectoryIsNamedAsSuch)
{
    EngineConfig c;
    std::string err;
    EXPECT_EQ(load_config_file("/", &c, &err), -EISDIR);
    EXPECT_NE(err.find("'/': is a directory, not a file"), std::string::npos) << err;
}
