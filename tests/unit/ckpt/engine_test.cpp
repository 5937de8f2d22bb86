// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/engine/engine.h"
#include "tests/unit/thrown_message.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <unistd.h>

using namespace hetpu::ckpt;

namespace {

// The -errno of the Error that f() throws, its message in `message`.
template <typename F> int error_code(std::string &message, F &&f)
{
    const auto e = hetpu::test::thrown<Error>(f);
    message = e ? e->what() : "";
    return e ? e->code() : 0;
}

class EngineTest : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/hetpu-ckpt-engine.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        root = tmpl;
        local = root + "/local";
        remote = root + "/remote";
        ASSERT_EQ(::mkdir(local.c_str(), 0755), 0);
        ASSERT_EQ(::mkdir(remote.c_str(), 0755), 0);
        config.local_dir = local;
        config.host_bytes = 1 << 20;
        config.host_incremental_init = false;
    }
    void TearDown() override
    {
        std::system(("umount '" + root + "/small' 2>/dev/null; rm -rf '" + root + "'").c_str());
    }

    std::unique_ptr<Engine> make() { return Engine::create(config); }

    // Deterministic contents for (version, region).
    static std::vector<char> data(std::int64_t v, std::size_t r, std::size_t size)
    {
        std::vector<char> d(size);
        for (std::size_t i = 0; i < size; ++i)
            d[i] = static_cast<char>((i * 31 + v * 7 + r * 13) & 0xff);
        return d;
    }

    void take(Engine &e, std::int64_t v, const std::vector<std::size_t> &sizes, int expect_rc = 0)
    {
        std::vector<RegionSpec> specs;
        for (std::size_t i = 0; i < sizes.size(); ++i)
            specs.push_back({"r" + std::to_string(i), sizes[i]});
        e.begin("app", v, specs);
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            auto d = data(v, i, sizes[i]);
            if (expect_rc == 0) {
                ASSERT_NO_THROW(e.capture("app", v, i, d.data()));
                continue;
            }
            std::string err;
            EXPECT_EQ(error_code(err, [&] { e.capture("app", v, i, d.data()); }), expect_rc) << err;
        }
    }

    void expect_restores(Engine &e, std::int64_t v, const std::vector<std::size_t> &sizes)
    {
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            std::vector<char> got(sizes[i]);
            ASSERT_NO_THROW(e.restore("app", v, i, got.data(), got.size())) << "v" << v << " r" << i;
            ASSERT_EQ(got, data(v, i, sizes[i])) << "v" << v << " r" << i;
        }
    }

    std::string root, local, remote;
    EngineConfig config;
};

// Waits for background work (prefetch, incremental init) to reach a state: a condition,
// not a time, so a loaded machine only makes the wait longer. The bound only turns a hang
// into a failure; the assertions after the wait say what was missing.
template <typename Done> void wait_until(Done done)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!done() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

}  // namespace

TEST_F(EngineTest, CheckpointFlushRestoreAndRestart)
{
    const std::vector<std::size_t> sizes = {10000, 3, 70000};
    {
        auto e = make();
        for (int v = 1; v <= 3; ++v)
            take(*e, v, sizes);
        std::string err;
        ASSERT_NO_THROW(e->wait("app", 3, Tier::Local));
        expect_restores(*e, 2, sizes);
        EXPECT_EQ(e->stats().restored_from_host_bytes, 80003u);
        EXPECT_EQ(e->stats().restored_from_disk_bytes, 0u);
        std::int64_t latest = 0;
        ASSERT_NO_THROW(latest = e->latest("app"));
        EXPECT_EQ(latest, 3);
        EXPECT_EQ(error_code(err, [&] { e->begin("app", 3, {{"r0", 1}}); }), -EEXIST);
        EXPECT_EQ(err, "checkpoint 'app' version 3 was already taken in this run (use a new version number)");
    }
    // A new engine (a restarted process) finds the versions on disk.
    auto e = make();
    std::int64_t latest = 0;
    std::string err;
    ASSERT_NO_THROW(latest = e->latest("app"));
    EXPECT_EQ(latest, 3);
    expect_restores(*e, 3, sizes);
    expect_restores(*e, 1, sizes);
    EXPECT_EQ(e->stats().restored_from_disk_bytes, 2 * 80003u);
    std::vector<char> wrong(5);
    EXPECT_EQ(error_code(err, [&] { e->restore("app", 3, 0, wrong.data(), wrong.size()); }), -EINVAL);
    EXPECT_EQ(err, "region 'r0' holds 10000 bytes, the destination 5");
    EXPECT_EQ(error_code(err, [&] { e->restore("app", 9, 0, wrong.data(), wrong.size()); }), -ENOENT);
    EXPECT_EQ(err, "checkpoint 'app' version 9 exists on no tier");
    EXPECT_EQ(error_code(err, [&] { e->latest("other"); }), -ENOENT);
    EXPECT_EQ(err, "no complete version of checkpoint 'other' on any tier");
    EXPECT_EQ(error_code(err, [&] { e->begin("a/b", 1, {{"r0", 1}}); }), -EINVAL);
    EXPECT_EQ(err, "checkpoint name 'a/b' contains '/' (use letters, digits, '_', '-', '.')");
    EXPECT_EQ(error_code(err, [&] { e->wait("app", 3, Tier::Remote); }), -EINVAL);
    EXPECT_EQ(err, "no remote tier configured ([remote] path)");
}

TEST_F(EngineTest, SmallHostCacheWaitsForFlushesAndLosesNothing)
{
    config.host_bytes = 64 << 10;
    auto e = make();
    for (int v = 1; v <= 12; ++v)
        take(*e, v, {20000, 20000});
    ASSERT_NO_THROW(e->drain());
    for (int v = 1; v <= 12; ++v)
        expect_restores(*e, v, {20000, 20000});
    EXPECT_GT(e->stats().evicted_bytes, 0u);
    EXPECT_GT(e->stats().restored_from_disk_bytes, 0u);
    // A region larger than the whole cache is written through to the local tier.
    take(*e, 13, {200000});
    EXPECT_EQ(e->stats().written_through_bytes, 200000u);
    expect_restores(*e, 13, {200000});
}

TEST_F(EngineTest, RemoteTierAndRetention)
{
    config.remote_dir = remote;
    config.versions_to_keep = 2;
    {
        auto e = make();
        for (int v = 1; v <= 5; ++v)
            take(*e, v, {5000});
        ASSERT_NO_THROW(e->wait("app", 5, Tier::Remote));
        ASSERT_NO_THROW(e->drain());
    }
    EXPECT_EQ(complete_versions(remote, "app", true), (std::vector<std::int64_t>{4, 5}));
    EXPECT_EQ(complete_versions(local, "app", true), (std::vector<std::int64_t>{4, 5}));
    // Lose the node-local disk: restore comes from the remote tier.
    std::system(("rm -f '" + local + "'/*").c_str());
    auto e = make();
    std::int64_t latest = 0;
    ASSERT_NO_THROW(latest = e->latest("app"));
    EXPECT_EQ(latest, 5);
    expect_restores(*e, 5, {5000});
}

// The state a crash during remote copies leaves: versions 1-6 complete locally, only 1 and 2
// remote, and region files of a remote copy without its manifest. The next engine on the same
// directories removes the orphan files, copies the newest versions the remote tier keeps
// (6, 5, 4; 3 would be dropped at once), and each tier ends with exactly those.
TEST_F(EngineTest, RemoteTierCatchesUpAfterACrash)
{
    {
        auto e = make();  // no remote tier: everything stays local
        for (int v = 1; v <= 6; ++v)
            take(*e, v, {5000, 300});
        ASSERT_NO_THROW(e->drain());
    }
    for (int v = 1; v <= 2; ++v)
        for (const std::string f : {".0.dat", ".1.dat", ".manifest"})
            ASSERT_EQ(std::system(("cp '" + local + "/app.v" + std::to_string(v) + f + "' '" + remote + "'").c_str()),
                      0);
    ASSERT_EQ(std::system(("cp '" + local + "/app.v5.0.dat' '" + remote + "/app.v5.0.dat'").c_str()), 0);
    ASSERT_EQ(std::system(("cp '" + local + "/app.v6.0.dat' '" + remote + "/app.v9.0.dat'").c_str()), 0);
    EXPECT_EQ(orphan_versions(remote, "app"), (std::vector<std::int64_t>{5, 9}));
    config.remote_dir = remote;
    config.versions_to_keep = 3;
    {
        auto e = make();
        EXPECT_EQ(orphan_versions(remote, "app"), (std::vector<std::int64_t>{})) << "removed at start";
        ASSERT_NO_THROW(e->wait("app", 4, Tier::Remote));
        ASSERT_NO_THROW(e->drain());
    }
    EXPECT_EQ(complete_versions(remote, "app", true), (std::vector<std::int64_t>{4, 5, 6}));
    EXPECT_EQ(complete_versions(local, "app", true), (std::vector<std::int64_t>{4, 5, 6}));
    EXPECT_EQ(orphan_versions(remote, "app"), (std::vector<std::int64_t>{}));
    // The remote copies are whole: with the local disk gone, every kept version restores.
    std::system(("rm -f '" + local + "'/*").c_str());
    auto e = make();
    for (int v = 4; v <= 6; ++v)
        expect_restores(*e, v, {5000, 300});
}

TEST_F(EngineTest, FullDiskFailsTheNewVersionOnly)
{
    config.local_capacity = 30000;  // simulated: the test runs without a small file system
    auto e = make();
    take(*e, 1, {10000});
    std::string err;
    ASSERT_NO_THROW(e->wait("app", 1, Tier::Local));
    take(*e, 2, {25000});
    EXPECT_EQ(error_code(err, [&] { e->wait("app", 2, Tier::Local); }), -ENOSPC) << err;
    EXPECT_NE(err.find("no space"), std::string::npos) << err;
    EXPECT_EQ(error_code(err, [&] { e->drain(); }), -ENOSPC);
    EXPECT_NE(err.find("no space left (simulated tier capacity) writing '" + local + "/"), std::string::npos) << err;
    EXPECT_EQ(complete_versions(local, "app", true), (std::vector<std::int64_t>{1}));
    std::int64_t latest = 0;
    ASSERT_NO_THROW(latest = e->latest("app"));
    EXPECT_EQ(latest, 1) << "a version that failed to flush is not offered";
    expect_restores(*e, 1, {10000});
}

TEST_F(EngineTest, RealFullFileSystemFailsTheNewVersionOnly)
{
    // A real ENOSPC needs a small file system: a 256 KiB tmpfs, which only root can mount.
    const std::string small = root + "/small";
    ASSERT_EQ(::mkdir(small.c_str(), 0755), 0);
    if (::geteuid() != 0 || std::system(("mount -t tmpfs -o size=256k tmpfs '" + small + "' 2>/dev/null").c_str()) != 0)
        GTEST_SKIP() << "cannot mount a small tmpfs here (needs root); the simulated-capacity test covers ENOSPC";
    config.local_dir = small;
    {
        auto e = make();
        take(*e, 1, {100000});
        std::string err;
        ASSERT_NO_THROW(e->wait("app", 1, Tier::Local));
        take(*e, 2, {200000});
        EXPECT_EQ(error_code(err, [&] { e->wait("app", 2, Tier::Local); }), -ENOSPC) << err;
        EXPECT_NE(err.find(small), std::string::npos) << err;
        std::int64_t latest = 0;
        ASSERT_NO_THROW(latest = e->latest("app"));
        EXPECT_EQ(latest, 1);
    }
    EXPECT_EQ(complete_versions(small, "app", true), (std::vector<std::int64_t>{1}));
    EXPECT_NE(std::system(("ls -a '" + small + "' | grep -q tmp").c_str()), 0) << "temporary file left behind";
}

TEST_F(EngineTest, MissingDirectoryIsAClearError)
{
    config.local_dir = root + "/nope";
    std::string err;
    EXPECT_EQ(error_code(err, [&] { Engine::create(config); }), -ENOENT) << err;
    EXPECT_NE(err.find(root + "/nope"), std::string::npos) << err;
    EXPECT_NE(err.find("create it"), std::string::npos) << err;
}

TEST_F(EngineTest, CorruptedDiskDataIsRefused)
{
    {
        auto e = make();
        take(*e, 1, {4096});
        ASSERT_NO_THROW(e->drain());
    }
    {
        std::fstream f(local + "/" + region_file_name("app", 1, 0), std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(100);
        f.put('\x7f');
    }
    auto e = make();
    std::vector<char> got(4096);
    std::string err;
    EXPECT_EQ(error_code(err, [&] { e->restore("app", 1, 0, got.data(), got.size()); }), -EBADMSG) << err;
    EXPECT_NE(err.find("checksum mismatch"), std::string::npos) << err;
}

TEST_F(EngineTest, HintedVersionsArePrefetchedIntoTheCache)
{
    config.host_bytes = 64 << 10;
    auto e = make();
    for (int v = 1; v <= 8; ++v)
        take(*e, v, {30000});
    ASSERT_NO_THROW(e->drain());
    // Versions 1 and 2 were evicted long ago; the hint brings them back before the restore.
    ASSERT_NO_THROW(e->prefetch_hint("app", {1, 2}));
    wait_until([&] { return e->stats().prefetched_bytes >= 60000; });
    ASSERT_EQ(e->stats().prefetched_bytes, 60000u);
    const auto before = e->stats().restored_from_disk_bytes;
    expect_restores(*e, 1, {30000});
    expect_restores(*e, 2, {30000});
    EXPECT_EQ(e->stats().restored_from_disk_bytes, before) << "both restores hit the cache";
}

TEST_F(EngineTest, HintsAfterARestartPrefetchFromDisk)
{
    {
        auto e = make();
        for (int v = 1; v <= 3; ++v)
            take(*e, v, {20000});
        ASSERT_NO_THROW(e->drain());
    }
    auto e = make();
    ASSERT_NO_THROW(e->prefetch_hint("app", {3, 2, 7}));  // 7 does not exist (yet)
    wait_until([&] { return e->stats().prefetched_bytes >= 40000; });
    ASSERT_EQ(e->stats().prefetched_bytes, 40000u);
    expect_restores(*e, 3, {20000});
    expect_restores(*e, 2, {20000});
    EXPECT_EQ(e->stats().restored_from_disk_bytes, 0u);
    // Taking version 1 again in this run replaces the old one, cached or not.
    take(*e, 1, {500});
    expect_restores(*e, 1, {500});
}

TEST_F(EngineTest, IncrementalInitUsesWhatIsReady)
{
    config.host_bytes = 64 << 20;
    config.host_incremental_init = true;
    auto e = make();
    take(*e, 1, {100000});  // immediately: goes to the touched part or through to disk
    ASSERT_NO_THROW(e->drain());
    wait_until([&] { return e->host_ready_bytes() >= (64u << 20); });
    EXPECT_EQ(e->host_ready_bytes(), 64u << 20);
    take(*e, 2, {100000});
    EXPECT_EQ(e->stats().written_through_bytes + 100000 <= e->stats().captured_bytes, true);
    expect_restores(*e, 1, {100000});
    expect_restores(*e, 2, {100000});
}

// Two runs on one checkpoint directory corrupted each other's versions: the second engine
// is refused, naming the holder's PID, and the directory is free again once the first ends.
TEST_F(EngineTest, ASecondEngineOnTheSameDirectoryIsRefusedWithTheHoldersPid)
{
    auto first = make();
    std::string err;
    EXPECT_EQ(error_code(err, [&] { Engine::create(config); }), -EBUSY) << err;
    EXPECT_EQ(err, "checkpoint directory '" + local + "' is in use by process " + std::to_string(::getpid()) +
                       " (it holds " + local +
                       "/.hetpu-ckpt.lock): give each run its own directory, or wait for that run to end");
    first.reset();
    ASSERT_NE(Engine::create(config), nullptr);
}
