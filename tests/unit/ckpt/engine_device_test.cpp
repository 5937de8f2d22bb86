// SPDX-License-Identifier: LGPL-2.1-or-later
// The engine's device cache tier over fake devices (host memory standing in for device
// memory, every copy logged): captures stay on the device, full devices send their remainder
// where the peer schedule says, versions flow on to the disks, restores read device copies.
#include "ckpt_backend/engine/engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace hetpu::ckpt;

namespace {

std::atomic<std::uint64_t> g_device_bytes_in_use{0};  // over every fake, outlives them

struct CopyRecord {
    int from, to;
    std::uint64_t bytes;
};

class FakeDevices : public DeviceMemory {
public:
    FakeDevices(std::size_t n, std::uint64_t limit_each)
        : limit_(n, limit_each), used_(n, 0), bw_(n, std::vector<double>(n, 0))
    {
        host_bw_.assign(n, 1e9);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j)
                bw_[i][j] = i == j ? 0 : 4e9;
    }
    std::size_t device_count() const override { return limit_.size(); }
    std::uint64_t device_bytes(std::size_t d) const override { return limit_[d]; }
    std::uintptr_t allocate(std::size_t d, std::uint64_t bytes) override
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (used_[d] + bytes > limit_[d])
            return 0;
        used_[d] += bytes;
        g_device_bytes_in_use += bytes;
        chunks_.emplace_back(new char[bytes]);
        return reinterpret_cast<std::uintptr_t>(chunks_.back().get());
    }
    void release(std::size_t d, std::uintptr_t, std::uint64_t bytes) override
    {
        std::lock_guard<std::mutex> lock(mu_);
        used_[d] -= bytes;
        g_device_bytes_in_use -= bytes;
        ++released_;
    }
    void copy(const DeviceAddress &src, const DeviceAddress &dst, std::uint64_t bytes) override
    {
        if (dst.device == kHostMemory) {
            std::unique_lock<std::mutex> lock(mu_);
            gate_.wait(lock, [&] { return !hold_to_host_; });
        }
        std::memcpy(reinterpret_cast<char *>(dst.base) + dst.offset,
                    reinterpret_cast<const char *>(src.base) + src.offset, bytes);
        std::lock_guard<std::mutex> lock(mu_);
        log_.push_back({src.device, dst.device, bytes});
    }
    double bandwidth(std::size_t from, int to) const override
    {
        return to == kHostMemory ? host_bw_[from] : bw_[from][static_cast<std::size_t>(to)];
    }
    // While held, copies to host memory wait (so a test sees what happened before them).
    void hold_copies_to_host(bool hold)
    {
        {
            std::lock_guard<std::mutex> lock(mu_);
            hold_to_host_ = hold;
        }
        gate_.notify_all();
    }
    std::vector<CopyRecord> log()
    {
        std::lock_guard<std::mutex> lock(mu_);
        return log_;
    }
    std::uint64_t used(std::size_t d)
    {
        std::lock_guard<std::mutex> lock(mu_);
        return used_[d];
    }
    // Device memory pressure: the device wants its cache to shrink to `bytes`.
    void squeeze_to(std::size_t d, std::uint64_t bytes)
    {
        std::lock_guard<std::mutex> lock(mu_);
        squeeze_.resize(limit_.size(), UINT64_MAX);
        squeeze_[d] = bytes;
    }
    std::vector<std::uint64_t> pressure() override
    {
        std::lock_guard<std::mutex> lock(mu_);
        std::vector<std::uint64_t> want(squeeze_.size(), 0);
        for (std::size_t d = 0; d < squeeze_.size(); ++d)
            want[d] = used_[d] > squeeze_[d] ? used_[d] - squeeze_[d] : 0;
        return want;
    }

    std::vector<std::uint64_t> limit_, used_;
    std::vector<std::vector<double>> bw_;
    std::vector<double> host_bw_;
    int released_ = 0;

private:
    std::mutex mu_;
    std::condition_variable gate_;
    bool hold_to_host_ = false;
    std::vector<std::uint64_t> squeeze_;
    std::vector<std::unique_ptr<char[]>> chunks_;
    std::vector<CopyRecord> log_;
};

constexpr std::uint64_t kSlot = 64 << 10;

class EngineDevice : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/hetpu-ckpt-device.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        root = tmpl;
        config.local_dir = root;
        config.host_bytes = 4 << 20;
        config.host_incremental_init = false;
        config.device.bytes = 512 << 10;
        config.device.chunk_bytes = 128 << 10;
        config.device.slot_bytes = kSlot;
        config.device.regrow_after_s = 0;  // a shrunk cache stays shrunk unless a test says otherwise
    }
    void TearDown() override { std::system(("rm -rf '" + root + "'").c_str()); }

    // An engine over `fake` (kept for inspection) with its caches fully grown.
    std::unique_ptr<Engine> make(FakeDevices *fake)
    {
        auto e = Engine::create(config, std::unique_ptr<DeviceMemory>(fake));
        e->wait_device_caches_ready();
        return e;
    }
    static std::vector<char> pattern(std::size_t size, int seed)
    {
        std::vector<char> d(size);
        for (std::size_t i = 0; i < size; ++i)
            d[i] = static_cast<char>((i * 131 + static_cast<std::size_t>(seed) * 7) & 0xff);
        return d;
    }
    // Begins version v with one region per buffer and captures them from their devices.
    void take(Engine &e, std::int64_t v, std::vector<std::vector<char>> &buffers,
              const std::vector<std::size_t> &devices)
    {
        std::vector<RegionSpec> specs;
        std::vector<DeviceSource> sources;
        for (std::size_t i = 0; i < buffers.size(); ++i) {
            specs.push_back({"r" + std::to_string(i), buffers[i].size()});
            sources.push_back({i, devices[i], reinterpret_cast<std::uintptr_t>(buffers[i].data()), 0});
        }
        e.begin("app", v, specs);
        e.capture_from_devices("app", v, sources);
    }

    std::string root;
    EngineConfig config;
};

}  // namespace

TEST_F(EngineDevice, CaptureStaysOnTheDeviceAndReachesTheDisk)
{
    auto *fake = new FakeDevices(2, 1 << 20);
    auto e = make(fake);
    EXPECT_EQ(e->stats().device_cache_bytes, 2u * (512 << 10));
    std::vector<std::vector<char>> buffers{pattern(100 << 10, 1), pattern(50 << 10, 2)};
    const auto expected = buffers;
    fake->hold_copies_to_host(true);  // the device flush waits until the capture is checked
    take(*e, 1, buffers, {0, 1});
    // The capture copied device to device on the same device, nothing to the host.
    std::uint64_t captured = 0;
    for (const CopyRecord &c : fake->log()) {
        EXPECT_EQ(c.from, c.to);
        EXPECT_NE(c.to, kHostMemory);
        captured += c.bytes;
    }
    EXPECT_EQ(captured, 150u << 10);
    fake->hold_copies_to_host(false);
    const EngineStats s = e->stats();
    EXPECT_EQ(s.device_local_bytes, (150u << 10));
    EXPECT_EQ(s.device_peer_bytes, 0u);
    EXPECT_EQ(s.device_to_host_at_capture_bytes, 0u);
    EXPECT_EQ(s.peer_schedules, 0u);
    // The application may overwrite its buffers now: the cache holds the version.
    for (auto &b : buffers)
        std::memset(b.data(), 0, b.size());
    e->wait("app", 1, Tier::Local);
    e->drain();
    EXPECT_EQ(e->stats().device_flushed_bytes, (150u << 10));
    for (std::size_t i = 0; i < expected.size(); ++i) {
        std::vector<char> back(expected[i].size());
        e->restore("app", 1, i, back.data(), back.size());
        EXPECT_EQ(back, expected[i]);
    }
    e.reset();
    EXPECT_EQ(g_device_bytes_in_use.load(), 0u);  // chunks handed back at the end
    // A fresh engine finds the version on disk.
    auto again = Engine::create(config);
    std::vector<char> back(expected[0].size());
    again->restore("app", 1, 0, back.data(), back.size());
    EXPECT_EQ(back, expected[0]);
}

// Device 0's cache holds 2 slots, its checkpoint needs 7: the remainder (5 slots) goes where
// the configured schedule says. Link 0->1 is 4x the host link, so min-time max-flow sends 4
// to device 1 and 1 to the host; greedy and local-only differ. If the engine did not call the
// peer schedule these byte counts could not all match.
TEST_F(EngineDevice, FullDeviceSendsItsRemainderPerThePeerSchedule)
{
    for (PeerPolicy policy : {PeerPolicy::Flow, PeerPolicy::Greedy, PeerPolicy::Local}) {
        SCOPED_TRACE(static_cast<int>(policy));
        config.device.peer_policy = policy;
        std::system(("rm -rf '" + root + "'/*").c_str());
        auto *fake = new FakeDevices(2, 1 << 20);
        fake->limit_[0] = 2 * kSlot;  // device 0 gets one 128 KiB chunk, then is refused
        auto e = make(fake);
        EXPECT_EQ(e->stats().device_chunk_refusals, 1u);
        EXPECT_EQ(e->device_free_slots(0), 2u);
        EXPECT_EQ(e->device_free_slots(1), 8u);
        std::vector<std::vector<char>> buffers{pattern(7 * kSlot, 3)};
        const auto expected = buffers;
        take(*e, 1, buffers, {0});

        // What the schedule core says for this problem (slot units).
        PeerProblem p;
        p.remainder = {5, 0};
        p.spare = {0, 8};
        p.link_bw = {{0, 4e9 / kSlot}, {4e9 / kSlot, 0}};
        p.host_bw = {1e9 / kSlot, 1e9 / kSlot};
        const PeerSchedule want = policy == PeerPolicy::Flow     ? schedule_min_time_max_flow(p)
                                  : policy == PeerPolicy::Greedy ? schedule_greedy(p)
                                                                 : schedule_local_only(p);
        std::uint64_t want_peer = 0, want_host = 0;
        for (const Transfer &t : want.transfers)
            (t.to == kHost ? want_host : want_peer) += t.bytes;
        const EngineStats s = e->stats();
        EXPECT_EQ(s.peer_schedules, 1u);
        EXPECT_DOUBLE_EQ(s.peer_schedule_time_s, want.time);
        EXPECT_EQ(s.device_local_bytes, 2 * kSlot);
        EXPECT_EQ(s.device_peer_bytes, want_peer * kSlot);
        EXPECT_EQ(s.device_to_host_at_capture_bytes, want_host * kSlot);
        if (policy == PeerPolicy::Flow) {
            EXPECT_EQ(want_peer, 4u);
            EXPECT_EQ(want_host, 1u);
        }
        if (policy == PeerPolicy::Local) {
            EXPECT_EQ(want_peer, 0u);
        }
        std::memset(buffers[0].data(), 0, buffers[0].size());
        e->wait("app", 1, Tier::Local);
        std::vector<char> back(expected[0].size());
        e->restore("app", 1, 0, back.data(), back.size());
        EXPECT_EQ(back, expected[0]);
    }
}

// The host-bound pieces of an overflowing region are consecutive bytes on both sides: they
// are read from the device as one copy, not one per slot (11 reads of 64 KiB here).
TEST_F(EngineDevice, HostBoundPiecesOfARegionAreReadAsOneCopy)
{
    auto *fake = new FakeDevices(1, 1 << 20);
    auto e = make(fake);
    ASSERT_EQ(e->device_free_slots(0), 8u);
    std::vector<std::vector<char>> buffers{pattern(19 * kSlot, 6)};
    const auto expected = buffers;
    take(*e, 1, buffers, {0});
    EXPECT_EQ(e->stats().device_to_host_at_capture_bytes, 11 * kSlot);
    // The device flush reads the kept slots later, one copy per 128 KiB chunk: only the
    // capture reads 64 KiB pieces or the whole host-bound range.
    std::size_t range_reads = 0, slot_reads = 0;
    for (const CopyRecord &c : fake->log())
        if (c.from == 0 && c.to == kHostMemory) {
            range_reads += c.bytes == 11 * kSlot;
            slot_reads += c.bytes == kSlot;
        }
    EXPECT_EQ(range_reads, 1u);
    EXPECT_EQ(slot_reads, 0u);
    std::memset(buffers[0].data(), 0, buffers[0].size());
    e->wait("app", 1, Tier::Local);
    std::vector<char> back(expected[0].size());
    e->restore("app", 1, 0, back.data(), back.size());
    EXPECT_EQ(back, expected[0]);
}

// Without a host cache the device flush writes through to disk; a restore then reads the
// device copy (the fastest tier holding it), byte-exact.
TEST_F(EngineDevice, RestoreReadsTheDeviceCopy)
{
    config.host_bytes = 0;
    auto *fake = new FakeDevices(2, 1 << 20);
    auto e = make(fake);
    std::vector<std::vector<char>> buffers{pattern(200 << 10, 4), pattern(30 << 10, 5)};
    const auto expected = buffers;
    take(*e, 7, buffers, {1, 0});
    e->wait("app", 7, Tier::Device);
    e->wait("app", 7, Tier::Local);
    e->drain();
    for (std::size_t i = 0; i < expected.size(); ++i) {
        std::vector<char> back(expected[i].size());
        e->restore("app", 7, i, back.data(), back.size());
        EXPECT_EQ(back, expected[i]);
    }
    EXPECT_EQ(e->stats().restored_from_device_bytes, (230u << 10));
    EXPECT_EQ(e->stats().restored_from_disk_bytes, 0u);
    EXPECT_EQ(e->latest("app"), 7);
}

// Flushed device copies are evicted (oldest first) to make room for the next checkpoint:
// every version is captured on the device, none spills to the host.
TEST_F(EngineDevice, FlushedCopiesAreEvictedForNewCaptures)
{
    auto *fake = new FakeDevices(1, 1 << 20);
    auto e = make(fake);  // 8 slots
    for (std::int64_t v = 0; v < 5; ++v) {
        std::vector<std::vector<char>> buffers{pattern(5 * kSlot, static_cast<int>(v))};
        take(*e, v, buffers, {0});
        e->drain();  // flushed to the host tier: its device copy is evictable
    }
    const EngineStats s = e->stats();
    EXPECT_EQ(s.device_local_bytes, 25 * kSlot);
    EXPECT_EQ(s.device_to_host_at_capture_bytes, 0u);
    EXPECT_EQ(s.device_evicted_bytes, 4 * 5 * kSlot);
    std::vector<char> back(5 * kSlot);
    e->restore("app", 2, 0, back.data(), back.size());
    EXPECT_EQ(back, pattern(5 * kSlot, 2));
}

TEST_F(EngineDevice, NoDeviceSectionMeansNoDeviceTier)
{
    config.device.bytes = 0;
    auto e = Engine::create(config, std::make_unique<FakeDevices>(2, 1 << 20));
    EXPECT_FALSE(e->device_tier());
    e->begin("app", 1, {{"r0", 10}});
    EXPECT_THROW(e->capture_from_devices("app", 1, {{0, 0, 0, 0}}), Error);
}

// A restore into device memory reads the device tier when it holds the version (device to
// device, including a slot that went to a peer); a later run without that cache reads the
// disk and copies host to device, byte-exact either way.
TEST_F(EngineDevice, RestoreIntoDeviceMemory)
{
    auto *fake = new FakeDevices(2, 1 << 20);
    fake->limit_[0] = 2 * kSlot;
    auto e = make(fake);
    std::vector<std::vector<char>> buffers{pattern(3 * kSlot + 5, 6)};
    const auto expected = buffers;
    take(*e, 4, buffers, {0});
    e->drain();
    std::vector<char> on_device(expected[0].size());
    e->restore_to_device("app", 4, 0, {1, reinterpret_cast<std::uintptr_t>(on_device.data()), 0}, on_device.size());
    EXPECT_EQ(on_device, expected[0]);
    EXPECT_EQ(e->stats().restored_into_device_bytes, on_device.size());
    EXPECT_EQ(e->stats().restored_from_device_bytes, on_device.size());
    EXPECT_THROW(e->restore_to_device("app", 4, 0, {5, 0, 0}, on_device.size()), Error);
    e.reset();
    auto later = make(new FakeDevices(2, 1 << 20));
    std::fill(on_device.begin(), on_device.end(), 0);
    later->restore_to_device("app", 4, 0, {0, reinterpret_cast<std::uintptr_t>(on_device.data()), 0}, on_device.size());
    EXPECT_EQ(on_device, expected[0]);
    EXPECT_EQ(later->stats().restored_from_disk_bytes, on_device.size());
    EXPECT_EQ(later->stats().restored_from_device_bytes, 0u);
}

// RTM's backward pass: versions captured on device 0 are restored in reverse order into device
// memory. The device cache holds only the newest; with the restore order hinted, each next
// version is read back into the device cache before its restore, which is then a device hit.
TEST_F(EngineDevice, HintedRestoresBecomeDeviceCacheHits)
{
    auto *fake = new FakeDevices(1, 1 << 20);
    auto e = make(fake);  // 8 slots: one 5-slot version fits
    for (std::int64_t v = 0; v < 4; ++v) {
        std::vector<std::vector<char>> buffers{pattern(5 * kSlot, static_cast<int>(v))};
        take(*e, v, buffers, {0});
        e->drain();
    }
    EXPECT_EQ(e->stats().device_evicted_bytes, 3 * 5 * kSlot);  // versions 0-2 left the device
    e->prefetch_hint("app", {2, 1, 0});
    std::vector<char> out(5 * kSlot);
    std::uint64_t expect_prefetched = 0;
    for (std::int64_t v : {2, 1, 0}) {
        // Waiting on a condition (the prefetch of this version), not on a deadline.
        expect_prefetched += 5 * kSlot;
        while (e->stats().device_prefetched_bytes < expect_prefetched)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        e->restore_to_device("app", v, 0, {0, reinterpret_cast<std::uintptr_t>(out.data()), 0}, out.size());
        EXPECT_EQ(out, pattern(5 * kSlot, static_cast<int>(v)));
    }
    const EngineStats s = e->stats();
    EXPECT_EQ(s.restored_from_device_bytes, 3 * 5 * kSlot) << "every restore a device cache hit";
    EXPECT_EQ(s.restored_from_disk_bytes + s.restored_from_host_bytes, 0u);
}

// Foreknowledge eviction in the device tier: with the restore order hinted, a capture that
// needs room evicts a version no hint asks for before the one the next restore reads, which
// then stays a device cache hit; FIFO evicts the oldest, and the restore reads the host tier.
TEST_F(EngineDevice, ScoreEvictionKeepsTheHintedVersionOnTheDevice)
{
    config.prefetch = false;  // what the capture's eviction kept, not what a prefetch brought back
    for (EvictionPolicy policy : {EvictionPolicy::Score, EvictionPolicy::Fifo}) {
        SCOPED_TRACE(policy == EvictionPolicy::Score ? "score" : "fifo");
        std::system(("rm -rf '" + root + "'/*").c_str());
        config.eviction = policy;
        auto e = make(new FakeDevices(1, 1 << 20));  // 8 slots: four 2-slot versions
        for (std::int64_t v = 0; v < 4; ++v) {
            std::vector<std::vector<char>> buffers{pattern(2 * kSlot, static_cast<int>(v))};
            take(*e, v, buffers, {0});
            e->drain();
        }
        e->prefetch_hint("app", {0});
        std::vector<std::vector<char>> more{pattern(2 * kSlot, 4)};
        take(*e, 4, more, {0});
        e->drain();
        EXPECT_EQ(e->stats().device_evicted_bytes, 2 * kSlot);
        std::vector<char> out(2 * kSlot);
        e->restore_to_device("app", 0, 0, {0, reinterpret_cast<std::uintptr_t>(out.data()), 0}, out.size());
        EXPECT_EQ(out, pattern(2 * kSlot, 0));
        const EngineStats s = e->stats();
        if (policy == EvictionPolicy::Score) {
            EXPECT_EQ(s.restored_from_device_bytes, 2 * kSlot) << "version 0 was kept for its restore";
        } else {
            EXPECT_EQ(s.restored_from_device_bytes, 0u) << "FIFO evicted the oldest, version 0";
            EXPECT_EQ(s.restored_from_host_bytes, 2 * kSlot);
        }
    }
}

// Device memory pressure: whole chunks go back, first those holding nothing, then those
// whose regions have reached the host tier; a region that has not is never dropped (the
// flush first, then the memory), so every version restores byte-exact.
TEST_F(EngineDevice, PressureGivesBackWholeChunksButNeverUnflushedData)
{
    auto *fake = new FakeDevices(1, 1 << 20);
    auto e = make(fake);  // 4 chunks of 2 slots
    ASSERT_EQ(fake->used(0), 512u << 10);
    std::vector<std::vector<char>> buffers{pattern(kSlot, 1), pattern(kSlot, 2), pattern(kSlot, 3)};
    const auto expected = buffers;
    fake->hold_copies_to_host(true);  // nothing reaches the host tier until released below
    take(*e, 1, buffers, {0, 0, 0});  // chunk 0: r0 and r1, chunk 1: r2
    EXPECT_EQ(e->shrink_device(0, 4), 2u * (128 << 10)) << "the two empty chunks only";
    EXPECT_EQ(e->shrink_device(0, 4), 0u) << "the other two hold unflushed regions";
    EXPECT_EQ(fake->used(0), 256u << 10);
    EXPECT_EQ(e->stats().device_pressure_evicted_bytes, 0u);
    fake->hold_copies_to_host(false);
    e->wait("app", 1, Tier::Host);
    EXPECT_EQ(e->shrink_device(0, 4), 2u * (128 << 10)) << "flushed: now they can go";
    EXPECT_EQ(fake->used(0), 0u);
    EngineStats s = e->stats();
    EXPECT_EQ(s.device_pressure_evicted_bytes, 3 * kSlot);
    EXPECT_EQ(s.device_pressure_released_bytes, 512u << 10);
    EXPECT_EQ(s.device_cache_bytes, 0u);
    for (std::size_t i = 0; i < expected.size(); ++i) {
        std::vector<char> back(kSlot);
        e->restore("app", 1, i, back.data(), back.size());
        EXPECT_EQ(back, expected[i]);
    }
    // No device cache left: the next checkpoint goes to the host, and still restores.
    std::vector<std::vector<char>> more{pattern(kSlot, 4)};
    take(*e, 2, more, {0});
    EXPECT_EQ(e->stats().device_to_host_at_capture_bytes, kSlot);
    e->wait("app", 2, Tier::Local);
    std::vector<char> back(kSlot);
    e->restore("app", 2, 0, back.data(), back.size());
    EXPECT_EQ(back, pattern(kSlot, 4));
    e.reset();
    EXPECT_EQ(g_device_bytes_in_use.load(), 0u);
}

// The engine polls DeviceMemory::pressure by itself and shrinks the cache to what the device
// asks (whole chunks, here the two empty ones).
TEST_F(EngineDevice, PolledPressureShrinksTheCache)
{
    auto *fake = new FakeDevices(1, 1 << 20);
    auto e = make(fake);
    std::vector<std::vector<char>> buffers{pattern(kSlot, 5)};
    take(*e, 1, buffers, {0});
    e->wait("app", 1, Tier::Local);
    fake->squeeze_to(0, 300 << 10);       // 512 KiB -> at most 300: two chunks must go
    while (fake->used(0) > (300u << 10))  // a condition, not a deadline
        usleep(1000);
    EXPECT_EQ(fake->used(0), 256u << 10);
    EXPECT_EQ(e->stats().device_cache_bytes, 256u << 10);
    EXPECT_EQ(e->stats().device_pressure_evicted_bytes, 0u) << "empty chunks went first";
    std::vector<char> back(kSlot);
    e->restore("app", 1, 0, back.data(), back.size());
    EXPECT_EQ(back, pattern(kSlot, 5));
}

// Once the device has been quiet for regrow_after, a cache that gave memory back grows again
// to its size, in new chunks, and they hold checkpoints like the first ones.
TEST_F(EngineDevice, ShrunkCacheGrowsBackOnceThePressureIsOver)
{
    config.device.regrow_after_s = 0.05;
    auto *fake = new FakeDevices(1, 1 << 20);
    auto e = make(fake);
    fake->squeeze_to(0, 300 << 10);
    while (e->stats().device_pressure_released_bytes < (256u << 10))  // a condition, not a deadline
        usleep(1000);
    fake->squeeze_to(0, UINT64_MAX);  // the application's data is gone again
    while (e->stats().device_cache_bytes < (512u << 10))
        usleep(1000);
    EngineStats s = e->stats();
    EXPECT_EQ(s.device_regrown_bytes % (128u << 10), 0u) << "whole chunks";
    EXPECT_GE(s.device_regrown_bytes, 256u << 10);
    EXPECT_EQ(s.device_chunk_refusals, 0u);
    EXPECT_EQ(fake->used(0), 512u << 10);
    // The whole cache holds a version again: 8 slots, no remainder to the host.
    std::vector<std::vector<char>> buffers;
    for (int i = 0; i < 8; ++i)
        buffers.push_back(pattern(kSlot, 20 + i));
    const auto expected = buffers;
    take(*e, 1, buffers, std::vector<std::size_t>(8, 0));
    EXPECT_EQ(e->stats().device_to_host_at_capture_bytes, 0u);
    e->wait("app", 1, Tier::Local);
    for (std::size_t i = 0; i < expected.size(); ++i) {
        std::vector<char> back(kSlot);
        e->restore("app", 1, i, back.data(), back.size());
        EXPECT_EQ(back, expected[i]);
    }
}
