// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/engine/config.h"
#include "tests/unit/thrown_message.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <tuple>
#include <utility>

using namespace hetpu::ckpt;

namespace {

// The -errno and the message of the Error that f() throws.
template <typename F> std::pair<int, std::string> error_of(F &&f)
{
    const auto e = hetpu::test::thrown<Error>(f);
    return e ? std::make_pair(e->code(), std::string(e->what())) : std::make_pair(0, std::string());
}

std::pair<int, std::string> config_error(const std::string &text, const std::string &origin)
{
    return error_of([&] { parse_config(text, origin); });
}

}  // namespace

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
    const EngineConfig c = parse_config(text, "t.toml");
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
    int rc = 0;
    std::string err;
    std::tie(rc, err) = config_error("[local]\npath = \"/tmp\"\n\nflush_thread = 2\n", "a.toml");
    EXPECT_EQ(rc, -EINVAL);
    // flush_thread lands in [local] here: still an unknown key, on line 4.
    EXPECT_EQ(err, "a.toml:4: unknown key 'local.flush_thread'");
    std::tie(rc, err) = config_error("flush_threads = 0\n[local]\npath = \"/tmp\"\n", "b.toml");
    EXPECT_EQ(rc, -EINVAL);
    EXPECT_EQ(err, "b.toml:1: flush_threads must be an integer in [1, 64]");
    std::tie(rc, err) = config_error("[host]\nsize = \"12 furlongs\"\n[local]\npath = \"/tmp\"\n", "c.toml");
    EXPECT_EQ(rc, -EINVAL);
    EXPECT_EQ(err, "c.toml:2: host.size: unknown unit 'furlongs' in '12 furlongs' (use B, KiB, MiB, GiB)");
    std::tie(rc, err) = config_error("eviction = \"lru\"\n[local]\npath = \"/tmp\"\n", "d.toml");
    EXPECT_EQ(rc, -EINVAL);
    EXPECT_EQ(err, "d.toml: eviction = \"lru\" is not \"score\" or \"fifo\"");
    std::tie(rc, err) = config_error("checksums = true\n", "e.toml");
    EXPECT_EQ(rc, -EINVAL);
    EXPECT_EQ(err, "e.toml: [local] path is required (the node-local checkpoint directory)");
    std::tie(rc, err) = config_error("x = = 1\n", "f.toml");
    EXPECT_EQ(rc, -EINVAL);
    EXPECT_EQ(err.rfind("f.toml:1: TOML syntax error: ", 0), 0u) << err;
    std::tie(rc, err) = error_of([] { load_config_file("/nonexistent/ckpt.toml"); });
    EXPECT_EQ(rc, -ENOENT);
    EXPECT_EQ(err, "cannot read checkpoint config '/nonexistent/ckpt.toml': No such file or directory");
}

TEST(CkptConfig, SizesWithUnits)
{
    EXPECT_EQ(parse_size("4096"), 4096u);
    EXPECT_EQ(parse_size("3KiB"), 3072u);
    EXPECT_EQ(parse_size("2 G"), 2ull << 30);
    EXPECT_EQ(error_of([] { parse_size("MiB"); }),
              std::make_pair(-EINVAL, std::string("'MiB' does not start with a number")));
}

// Sizes that do not fit 64 bits are errors with a message, not std::out_of_range("stoull")
// (20 digits) nor a silent wrap (17179869184G = 2^64 bytes, which wrapped to 0, "the file
// system's capacity").
TEST(CkptConfig, SizesTooLargeAreErrors)
{
    EXPECT_THROW_MSG(parse_size("99999999999999999999"), Error,
                     "'99999999999999999999' is too large (at most 2^64-1 bytes)");
    EXPECT_THROW_MSG(parse_size("17179869184G"), Error, "'17179869184G' is too large (at most 2^64-1 bytes)");
    EXPECT_EQ(parse_size("18446744073709551615"), 18446744073709551615ull);
    EXPECT_EQ(parse_size("17179869183G"), 17179869183ull << 30);

    const auto [rc, err] = config_error("[local]\npath = \"/tmp\"\ncapacity = \"99999999999999999999\"\n", "g.toml");
    EXPECT_EQ(rc, -EINVAL);
    EXPECT_NE(err.find("g.toml:3: local.capacity: '99999999999999999999' is too large"), std::string::npos) << err;
}

// A float where an integer is expected is a type error, not toml++'s float-to-integer
// conversion (undefined behaviour for 1e30).
TEST(CkptConfig, FloatsWhereIntegersBelongAreErrors)
{
    EXPECT_EQ(config_error("[local]\npath = \"/tmp\"\ncapacity = 1e30\n", "h.toml"),
              std::make_pair(-EINVAL, std::string("h.toml:3: local.capacity must be a size like 4096 or \"64MiB\"")));
    EXPECT_EQ(config_error("flush_threads = 2.0\n[local]\npath = \"/tmp\"\n", "i.toml"),
              std::make_pair(-EINVAL, std::string("i.toml:1: flush_threads must be an integer in [1, 64]")));
}

TEST(CkptConfig, ADirectoryIsNamedAsSuch)
{
    EXPECT_EQ(error_of([] { load_config_file("/"); }),
              std::make_pair(-EISDIR, std::string("cannot read checkpoint config '/': is a directory, not a file")));
}

TEST(CkptConfig, DeviceSection)
{
    const std::string local = "[local]\npath = \"/tmp\"\n";
    EXPECT_FALSE(parse_config(local, "a.toml").device.enabled()) << "no [device]: no device tier";
    EngineConfig c = parse_config(local + "[device]\nsize = \"64MiB\"\nchunk = \"8MiB\"\nslot = \"1MiB\"\n"
                                          "peer_schedule = \"greedy\"\n",
                                  "a.toml");
    EXPECT_TRUE(c.device.enabled());
    EXPECT_EQ(c.device.bytes, 64u << 20);
    EXPECT_EQ(c.device.chunk_bytes, 8u << 20);
    EXPECT_EQ(c.device.slot_bytes, 1u << 20);
    EXPECT_EQ(c.device.peer_policy, PeerPolicy::Greedy);
    c = parse_config(local + "[device]\nsize = \"25%\"\npeer_schedule = \"local\"\n", "a.toml");
    EXPECT_DOUBLE_EQ(c.device.fraction, 0.25);
    EXPECT_EQ(c.device.peer_policy, PeerPolicy::Local);
    c = parse_config(local + "[device]\nsize = 0\n", "a.toml");
    EXPECT_FALSE(c.device.enabled());
    EXPECT_EQ(parse_config(local + "[device]\nsize = \"1MiB\"\n", "a.toml").device.peer_policy, PeerPolicy::Flow);
    // The headroom the cache leaves to the application: one chunk unless set.
    EXPECT_EQ(c.device.headroom_bytes, 16u << 20) << "the default chunk";
    EXPECT_EQ(parse_config(local + "[device]\nsize = \"64MiB\"\nchunk = \"4MiB\"\n", "a.toml").device.headroom_bytes,
              4u << 20);
    EXPECT_EQ(parse_config(local + "[device]\nsize = \"64MiB\"\nheadroom = \"2MiB\"\n", "a.toml").device.headroom_bytes,
              2u << 20);
    EXPECT_EQ(c.device.regrow_after_s, 1.0) << "the default quiet spell";
    EXPECT_EQ(parse_config(local + "[device]\nsize = \"1MiB\"\nregrow_after = 0.25\n", "a.toml").device.regrow_after_s,
              0.25);
    EXPECT_EQ(parse_config(local + "[device]\nsize = \"1MiB\"\nregrow_after = 0\n", "a.toml").device.regrow_after_s,
              0.0)
        << "an integer, and 0: never";

    int rc = 0;
    std::string err;
    std::tie(rc, err) = config_error(local + "[device]\nsize = \"150%\"\n", "b.toml");
    EXPECT_EQ(rc, -EINVAL);
    EXPECT_EQ(err, "b.toml:4: device.size = \"150%\": a percentage must be a number in [0, 100] followed by %, "
                   "like \"25%\"");
    std::tie(rc, err) = config_error(local + "[device]\nsize = \"1MiB\"\npeer_schedule = \"fastest\"\n", "c.toml");
    EXPECT_EQ(err, "c.toml:5: device.peer_schedule = \"fastest\" is not \"flow\", \"greedy\" or \"local\"");
    std::tie(rc, err) =
        config_error(local + "[device]\nsize = \"1MiB\"\nchunk = \"100KiB\"\nslot = \"64KiB\"\n", "d.toml");
    EXPECT_EQ(err, "d.toml:5: device.chunk (102400 bytes) must be a non-zero multiple of device.slot (65536 bytes)");
    // A chunk larger than the whole cache would be ignored (the cache is then one chunk of its
    // size): said, not accepted. Without an explicit chunk, a small size is one chunk.
    std::tie(rc, err) =
        config_error(local + "[device]\nsize = \"1MiB\"\nchunk = \"4MiB\"\nslot = \"64KiB\"\n", "i.toml");
    EXPECT_EQ(rc, -EINVAL);
    EXPECT_EQ(err, "i.toml:5: device.chunk (4194304 bytes) is larger than device.size (1048576 bytes): the cache "
                   "grows by whole chunks; set chunk to at most the size");
    EXPECT_EQ(parse_config(local + "[device]\nsize = \"1MiB\"\n", "a.toml").device.bytes, 1u << 20);
    // The remote tier's simulated bandwidth; the local tier has none.
    EXPECT_EQ(parse_config(local + "[remote]\npath = \"/r\"\nbandwidth = \"64KiB\"\n", "a.toml").remote_bandwidth,
              64u << 10);
    std::tie(rc, err) = config_error("[local]\npath = \"/tmp\"\nbandwidth = \"1MiB\"\n", "j.toml");
    EXPECT_EQ(err, "j.toml:3: unknown key 'local.bandwidth'");
    std::tie(rc, err) = config_error(local + "[device]\nsize = \"1MiB\"\nheadroom = \"2 apples\"\n", "g.toml");
    EXPECT_NE(err.find("g.toml:5"), std::string::npos) << err;
    EXPECT_NE(err.find("device.headroom"), std::string::npos) << err;
    std::tie(rc, err) = config_error(local + "[device]\nsize = \"1MiB\"\nregrow_after = \"soon\"\n", "h.toml");
    EXPECT_EQ(err, "h.toml:5: device.regrow_after must be a number of seconds in [0, 3600]");
    std::tie(rc, err) = config_error(local + "[device]\nsize = \"1MiB\"\nregrow_after = -1\n", "h.toml");
    EXPECT_EQ(err, "h.toml:5: device.regrow_after must be a number of seconds in [0, 3600]");
    std::tie(rc, err) = config_error(local + "[device]\nsizes = \"1MiB\"\n", "e.toml");
    EXPECT_EQ(err, "e.toml:4: unknown key 'device.sizes'");
    std::tie(rc, err) = config_error(local + "device = 3\n", "f.toml");
    EXPECT_EQ(err.find("'device' must be a table"), err.find("'device'")) << err;
}

// A tier beyond the four built in reads its own table: named in the tables a parse accepts,
// its keys arrive as written with where they are; the same table unnamed is a typo.
TEST(CkptConfig, ATierTableReachesItsTier)
{
    const std::string text = "[local]\npath = \"/tmp/x\"\n[burst]\npath = \"/bb\"\nsize = \"4GiB\"\nstripes = 8\n"
                             "direct = true\n";
    const EngineConfig c = parse_config(text, "ckpt.toml", {"burst"});
    ASSERT_EQ(c.tier_settings.count("burst"), 1u);
    const TierSettings &bb = c.tier_settings.at("burst");
    EXPECT_EQ(bb.at("path").text, "/bb");
    EXPECT_TRUE(bb.at("path").is_string);
    EXPECT_EQ(bb.at("size").text, "4GiB");
    EXPECT_EQ(bb.at("stripes").text, "8");
    EXPECT_FALSE(bb.at("stripes").is_string);
    EXPECT_EQ(bb.at("direct").text, "true");
    EXPECT_EQ(bb.at("stripes").where, "ckpt.toml:6");
    try {
        parse_config(text, "ckpt.toml", {});
        FAIL() << "an unnamed table was accepted";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("unknown key 'burst'"), std::string::npos) << e.what();
    }
    EXPECT_THROW(parse_config("[local]\npath = \"/x\"\nburst = 3\n", "ckpt.toml", {"burst"}), Error);
}
