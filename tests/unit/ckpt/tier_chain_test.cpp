// SPDX-License-Identifier: LGPL-2.1-or-later
// The engine's tier chain with tiers the configuration does not describe, inserted into the
// list the configuration builds: a memory tier written for this test (a buffer that keeps
// regions in a map and flushes them from its own thread) and a third directory tier. The
// engine is not told what they are: captures go through them, they flush to the next tier,
// restores read them, waits see them, and a restart finds the versions on disk.
#include "ckpt_backend/engine/engine.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <sys/stat.h>
#include <unistd.h>

using namespace hetpu::ckpt;

namespace {

class BufferTier : public Tier {
public:
    BufferTier() : Tier(Tier::Host, "buffer tier") {}

    void attach(Chain &chain, std::size_t position) override
    {
        chain_ = &chain;
        position_ = position;
    }
    void start(std::vector<std::thread> &threads) override { threads.emplace_back(&BufferTier::flush_loop, this); }
    bool idle_locked() const override { return queue_.empty() && flushing_ == 0; }
    void wake_all() override { cv_.notify_all(); }
    void accept(const RegionKey &rk, const void *src, const std::function<void(bool)> *on_reached) override
    {
        std::unique_lock<std::mutex> lock(chain_->mu);
        const std::uint64_t size = chain_->begun_locked(rk).regions[rk.second].size;
        const char *bytes = static_cast<const char *>(src);
        held_[rk].assign(bytes, bytes + size);
        chain_->reached_locked(lock, rk, position_);
        if (on_reached)
            (*on_reached)(true);
        queue_.push_back(rk);
        ++accepted;
        lock.unlock();
        cv_.notify_one();
        chain_->notify_state();
    }
    bool read_locked(std::unique_lock<std::mutex> &, const RegionKey &rk, void *dst) override
    {
        auto it = held_.find(rk);
        if (it == held_.end())
            return false;
        std::memcpy(dst, it->second.data(), it->second.size());
        return true;
    }
    bool holds_locked(const RegionKey &rk) const override { return held_.count(rk) > 0; }
    void count_restored_locked(const RegionKey &, std::uint64_t bytes) override { restored_bytes += bytes; }

    // Read after Engine::drain (the chain's lock orders them).
    std::size_t accepted = 0, flushed = 0;
    std::uint64_t restored_bytes = 0;

private:
    void flush_loop()
    {
        Tier &next = chain_->tier(position_ + 1);
        std::unique_lock<std::mutex> lock(chain_->mu);
        for (;;) {
            cv_.wait(lock, [&] { return chain_->stopping || !queue_.empty(); });
            if (queue_.empty())
                return;
            const RegionKey rk = queue_.front();
            queue_.pop_front();
            ++flushing_;
            const std::vector<char> bytes = held_.at(rk);
            lock.unlock();
            try {
                next.accept(rk, bytes.data(), nullptr);
            } catch (const Error &) {
                // Recorded on the version by the next tier; drain() reports it.
            }
            lock.lock();
            --flushing_;
            ++flushed;
            lock.unlock();
            chain_->notify_state();
            lock.lock();
        }
    }

    Chain *chain_ = nullptr;
    std::size_t position_ = 0;
    std::map<RegionKey, std::vector<char>> held_;
    std::deque<RegionKey> queue_;
    int flushing_ = 0;
    std::condition_variable cv_;
};

class TierChain : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/hetpu-tier-chain.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        root = tmpl;
        for (const char *d : {"/local", "/burst", "/remote"})
            ASSERT_EQ(::mkdir((root + d).c_str(), 0755), 0);
        config.local_dir = root + "/local";
        config.host_bytes = 1 << 20;
        config.host_incremental_init = false;
    }
    void TearDown() override { std::system(("rm -rf '" + root + "'").c_str()); }

    static std::vector<char> data(std::int64_t v, std::size_t r, std::size_t size)
    {
        std::vector<char> d(size);
        for (std::size_t i = 0; i < size; ++i)
            d[i] = static_cast<char>((i * 17 + static_cast<std::size_t>(v) * 5 + r * 11) & 0xff);
        return d;
    }
    static void take(Engine &e, std::int64_t v, std::size_t regions, std::size_t size)
    {
        std::vector<RegionSpec> specs;
        for (std::size_t i = 0; i < regions; ++i)
            specs.push_back({"r" + std::to_string(i), size});
        e.begin("app", v, specs);
        for (std::size_t i = 0; i < regions; ++i)
            e.capture("app", v, i, data(v, i, size).data());
    }
    static void expect_restores(Engine &e, std::int64_t v, std::size_t regions, std::size_t size)
    {
        for (std::size_t i = 0; i < regions; ++i) {
            std::vector<char> got(size);
            e.restore("app", v, i, got.data(), got.size());
            EXPECT_EQ(got, data(v, i, size)) << "v" << v << " r" << i;
        }
    }
    // The configured tiers with `tier` inserted at `position`.
    std::vector<std::unique_ptr<Tier>> with(std::unique_ptr<Tier> tier, std::size_t position)
    {
        auto tiers = Engine::tiers_from_config(config, nullptr);
        tiers.insert(tiers.begin() + static_cast<std::ptrdiff_t>(position), std::move(tier));
        return tiers;
    }

    std::string root;
    EngineConfig config;
};

}  // namespace

// First in the list: captures enter the buffer, which flushes to the host cache and on to the
// disk; a restore finds the region in the buffer before any other tier.
TEST_F(TierChain, ANewFirstTierTakesTheCapturesAndServesTheRestores)
{
    auto owned = std::make_unique<BufferTier>();
    BufferTier *buffer = owned.get();
    auto e = Engine::create_with_tiers(config, with(std::move(owned), 0));
    take(*e, 1, 3, 5000);
    e->wait("app", 1, Tier::Local);
    e->drain();
    EXPECT_EQ(buffer->accepted, 3u);
    EXPECT_EQ(buffer->flushed, 3u);
    EXPECT_EQ(e->stats().captured_bytes, 3u * 5000) << "the host cache got what the buffer flushed";
    expect_restores(*e, 1, 3, 5000);
    EXPECT_EQ(buffer->restored_bytes, 3u * 5000);
    EXPECT_EQ(e->stats().restored_from_host_bytes + e->stats().restored_from_disk_bytes, 0u);
    e.reset();
    auto again = Engine::create(config);  // without the buffer: the version is on disk
    EXPECT_EQ(again->latest("app"), 1);
    expect_restores(*again, 1, 3, 5000);
    EXPECT_EQ(again->stats().restored_from_disk_bytes, 3u * 5000);
}

// Between a host cache without memory and the disk: the host cache writes through into the
// buffer, the buffer flushes to the disk, and waits for the host level see the regions in it.
TEST_F(TierChain, ANewMiddleTierReceivesWriteThroughsAndFlushesToTheDisk)
{
    config.host_bytes = 0;
    auto owned = std::make_unique<BufferTier>();
    BufferTier *buffer = owned.get();
    auto e = Engine::create_with_tiers(config, with(std::move(owned), 1));
    take(*e, 4, 2, 70000);
    e->wait("app", 4, Tier::Host);
    e->drain();
    EXPECT_EQ(buffer->accepted, 2u);
    EXPECT_EQ(buffer->flushed, 2u);
    EXPECT_EQ(e->stats().written_through_bytes, 2u * 70000);
    expect_restores(*e, 4, 2, 70000);
    EXPECT_EQ(buffer->restored_bytes, 2u * 70000);
    e->wait("app", 4, Tier::Local);
    e.reset();
    expect_restores(*Engine::create(config), 4, 2, 70000);
}

// A third directory between local and remote (a burst buffer): every version is copied
// through it to the remote directory, retention applies on it, and a restart reads it when
// the local copy is gone.
TEST_F(TierChain, ADirectoryTierBetweenLocalAndRemoteCopiesEveryVersionOn)
{
    config.remote_dir = root + "/remote";
    config.versions_to_keep = 2;
    auto e = Engine::create_with_tiers(
        config, with(std::make_unique<DiskTier>("burst buffer tier", root + "/burst", WriteOptions{}, 0), 2));
    for (std::int64_t v = 1; v <= 3; ++v) {
        take(*e, v, 2, 3000);
        e->wait("app", v, Tier::Remote);
    }
    e->drain();
    for (const char *dir : {"/local", "/burst", "/remote"}) {
        SCOPED_TRACE(dir);
        EXPECT_EQ(complete_versions(root + dir, "app", false), (std::vector<std::int64_t>{2, 3}));
    }
    e.reset();
    std::system(("rm -f '" + root + "'/local/*").c_str());
    auto again = Engine::create_with_tiers(
        config, with(std::make_unique<DiskTier>("burst buffer tier", root + "/burst", WriteOptions{}, 0), 2));
    EXPECT_EQ(again->latest("app"), 3);
    expect_restores(*again, 3, 2, 3000);
    EXPECT_EQ(again->stats().restored_from_disk_bytes, 2u * 3000);
}
