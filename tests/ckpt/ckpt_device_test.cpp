// SPDX-License-Identifier: LGPL-2.1-or-later
// The device cache tier on a real StarPU node with two OpenCL devices, each its own memory
// node (run by tests/ckpt/device_tier.sh: PoCL pthread devices, per-device memory limits):
// device-resident handles are captured device to device without any copy to main memory, a
// device whose cache is full sends its remainder where the min-time max-flow schedule over
// StarPU's calibrated bandwidths says, versions reach the local and remote directories,
// restores are byte-exact, and the devices' memory limits hold.
#include <hetpu/ckpt.h>

#include "ckpt_backend/core/peer_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "tests/integration/add_one_codelet.h"

namespace {

constexpr unsigned kSlot = 64 << 10;

class CkptDevice : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/hetpu-ckpt-device.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir = tmpl;
        ASSERT_EQ(::mkdir((dir + "/local").c_str(), 0755), 0);
        ASSERT_EQ(::mkdir((dir + "/remote").c_str(), 0755), 0);
        ASSERT_EQ(starpu_init(nullptr), 0);
        add_one_codelet_load();
        for (unsigned w = 0; w < starpu_worker_get_count(); ++w)
            if (starpu_worker_get_type(static_cast<int>(w)) == STARPU_OPENCL_WORKER)
                opencl_workers.push_back(w);
        for (unsigned node = 0; node < starpu_memory_nodes_get_count(); ++node)
            if (starpu_node_get_kind(node) == STARPU_OPENCL_RAM)
                opencl_nodes.push_back(node);
        if (opencl_nodes.size() < 2 || opencl_workers.size() < 2)
            GTEST_SKIP() << "needs two OpenCL devices (PoCL: run through tests/ckpt/device_tier.sh)";
    }
    void TearDown() override
    {
        add_one_codelet_unload();
        starpu_shutdown();
        std::system(("rm -rf '" + dir + "'").c_str());
    }
    std::string config(const std::string &device)
    {
        return "[host]\nsize = \"4MiB\"\nincremental_init = false\n[local]\npath = \"" + dir + "/local\"\n" +
               "[remote]\npath = \"" + dir + "/remote\"\n[device]\n" + device;
    }
    // One add_one task on OpenCL worker `k`: afterwards the handle is valid only there.
    void add_one_on(starpu_data_handle_t h, std::size_t k)
    {
        struct starpu_task *t = starpu_task_create();
        t->cl = &add_one_codelet;
        t->handles[0] = h;
        t->execute_on_a_specific_worker = 1;
        t->workerid = opencl_workers[k];
        ASSERT_EQ(starpu_task_submit(t), 0);
    }
    void expect_within_limits()
    {
        for (unsigned node : opencl_nodes)
            EXPECT_GE(starpu_memory_get_available(node), 0) << "memory node " << node << " is over its limit";
    }
    // The caches grow in the background after init; tests that count where bytes went start
    // once they are complete.
    static void wait_caches_grown()
    {
        hetpu_ckpt_stats s{};
        do {
            ASSERT_EQ(hetpu_ckpt_get_stats(&s), 0) << hetpu_ckpt_last_error();
        } while (s.device_caches_growing && usleep(1000) == 0);
    }
    static hetpu_ckpt_stats stats()
    {
        hetpu_ckpt_stats s{};
        EXPECT_EQ(hetpu_ckpt_get_stats(&s), 0) << hetpu_ckpt_last_error();
        return s;
    }

    std::string dir;
    std::vector<unsigned> opencl_workers, opencl_nodes;
};

std::vector<float> ramp(std::size_t n, float base)
{
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = base + static_cast<float>(i % 1000);
    return v;
}

}  // namespace

TEST_F(CkptDevice, DeviceResidentHandlesAreCapturedOnTheirDevice)
{
    ASSERT_EQ(hetpu_ckpt_init_from_string(config("size = \"2MiB\"\nchunk = \"1MiB\"\nslot = \"64KiB\"\n").c_str()), 0)
        << hetpu_ckpt_last_error();
    wait_caches_grown();
    const std::size_t n = 64 * 1024;  // 256 KiB per handle
    std::vector<float> a = ramp(n, 0), b = ramp(n, 5000);
    starpu_data_handle_t ha, hb;
    starpu_vector_data_register(&ha, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(a.data()), n, sizeof(float));
    starpu_vector_data_register(&hb, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(b.data()), n, sizeof(float));
    ASSERT_EQ(hetpu_ckpt_protect("a", ha), 0);
    ASSERT_EQ(hetpu_ckpt_protect("b", hb), 0);
    add_one_on(ha, 0);
    add_one_on(hb, 1);
    ASSERT_EQ(hetpu_ckpt_checkpoint("run", 1), 0) << hetpu_ckpt_last_error();
    ASSERT_EQ(hetpu_ckpt_wait("run", 1, HETPU_CKPT_TIER_DEVICE), 0) << hetpu_ckpt_last_error();
    // Captured from the devices: main memory still holds no valid copy (no device-to-host
    // copy of the handles happened), and the counters say device to device only.
    EXPECT_FALSE(starpu_data_is_on_node(ha, STARPU_MAIN_RAM));
    EXPECT_FALSE(starpu_data_is_on_node(hb, STARPU_MAIN_RAM));
    hetpu_ckpt_stats s = stats();
    EXPECT_EQ(s.device_count, 2u);
    EXPECT_EQ(s.device_path_captures, 2u);
    EXPECT_EQ(s.host_path_captures, 0u);
    EXPECT_EQ(s.device_local_bytes, 2 * n * sizeof(float));
    EXPECT_EQ(s.device_to_host_at_capture_bytes, 0u);
    EXPECT_EQ(s.device_peer_bytes, 0u);
    // Later writers on the devices, then the version reaches both directories.
    add_one_on(ha, 0);
    add_one_on(hb, 1);
    ASSERT_EQ(hetpu_ckpt_wait("run", 1, HETPU_CKPT_TIER_REMOTE), 0) << hetpu_ckpt_last_error();
    expect_within_limits();
    ASSERT_EQ(hetpu_ckpt_restore("run", 1), 0) << hetpu_ckpt_last_error();
    // Restored straight into the devices, from their caches: still nothing in main memory.
    s = stats();
    EXPECT_EQ(s.restored_into_device_bytes, 2 * n * sizeof(float));
    EXPECT_EQ(s.restored_from_device_bytes, 2 * n * sizeof(float));
    EXPECT_FALSE(starpu_data_is_on_node(ha, STARPU_MAIN_RAM));
    EXPECT_TRUE(starpu_data_is_on_node(ha, starpu_worker_get_memory_node(opencl_workers[0])));
    EXPECT_TRUE(starpu_data_is_on_node(hb, starpu_worker_get_memory_node(opencl_workers[1])));
    ASSERT_EQ(starpu_data_acquire(ha, STARPU_R), 0);
    ASSERT_EQ(starpu_data_acquire(hb, STARPU_R), 0);
    const std::vector<float> wa = ramp(n, 1), wb = ramp(n, 5001);
    EXPECT_EQ(a, wa);
    EXPECT_EQ(b, wb);
    starpu_data_release(ha);
    starpu_data_release(hb);
    ASSERT_EQ(hetpu_ckpt_finalize(), 0) << hetpu_ckpt_last_error();
    struct stat st;
    EXPECT_EQ(::stat((dir + "/remote").c_str(), &st), 0);
    starpu_data_unregister(ha);
    starpu_data_unregister(hb);
}

// Device 0's cache (4 slots) cannot hold its 8-slot handle: the remainder goes where the
// min-time max-flow schedule over StarPU's bus calibration puts it (device 1's spare slots
// and the host), and the version restores byte-exact.
TEST_F(CkptDevice, FullDeviceSendsItsRemainderPerTheFlowSchedule)
{
    ASSERT_EQ(
        hetpu_ckpt_init_from_string(
            config("size = \"256KiB\"\nchunk = \"256KiB\"\nslot = \"64KiB\"\npeer_schedule = \"flow\"\n").c_str()),
        0)
        << hetpu_ckpt_last_error();
    wait_caches_grown();
    const std::size_t na = 8 * kSlot / sizeof(float), nb = kSlot / sizeof(float);
    std::vector<float> a = ramp(na, 7), b = ramp(nb, 9);
    starpu_data_handle_t ha, hb;
    starpu_vector_data_register(&ha, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(a.data()), na, sizeof(float));
    starpu_vector_data_register(&hb, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(b.data()), nb, sizeof(float));
    ASSERT_EQ(hetpu_ckpt_protect("a", ha), 0);
    ASSERT_EQ(hetpu_ckpt_protect("b", hb), 0);
    add_one_on(ha, 0);
    add_one_on(hb, 1);
    ASSERT_EQ(hetpu_ckpt_checkpoint("run", 3), 0) << hetpu_ckpt_last_error();
    ASSERT_EQ(hetpu_ckpt_wait("run", 3, HETPU_CKPT_TIER_DEVICE), 0) << hetpu_ckpt_last_error();
    const hetpu_ckpt_stats s = stats();
    ASSERT_EQ(s.device_cache_bytes, 2u * 4 * kSlot) << "each device's 256 KiB chunk";
    // The schedule the engine must have used: device 0 keeps 4 slots and ships 4; device 1
    // keeps its 1 slot and has 3 spare; bandwidths from StarPU's calibration.
    hetpu::ckpt::PeerProblem p;
    p.remainder = {4, 0};
    p.spare = {0, 3};
    auto bw = [](unsigned from, unsigned to) {
        const double mbs = starpu_transfer_bandwidth(from, to);
        return (std::isfinite(mbs) && mbs > 0 ? mbs * 1e6 : 10e9) / kSlot;
    };
    p.link_bw = {{0, bw(opencl_nodes[0], opencl_nodes[1])}, {bw(opencl_nodes[1], opencl_nodes[0]), 0}};
    p.host_bw = {bw(opencl_nodes[0], STARPU_MAIN_RAM), bw(opencl_nodes[1], STARPU_MAIN_RAM)};
    const hetpu::ckpt::PeerSchedule want = hetpu::ckpt::schedule_min_time_max_flow(p);
    std::uint64_t peer = 0, host = 0;
    for (const hetpu::ckpt::Transfer &t : want.transfers)
        (t.to == hetpu::ckpt::kHost ? host : peer) += t.bytes;
    EXPECT_EQ(s.peer_schedules, 1u);
    EXPECT_EQ(s.device_local_bytes, 5u * kSlot);
    EXPECT_EQ(s.device_peer_bytes, peer * kSlot);
    EXPECT_EQ(s.device_to_host_at_capture_bytes, host * kSlot);
    EXPECT_DOUBLE_EQ(s.peer_schedule_time_s, want.time);
    std::printf("flow schedule: %llu slots to the peer, %llu to the host (bandwidths %.3g, %.3g GB/s)\n",
                static_cast<unsigned long long>(peer), static_cast<unsigned long long>(host),
                p.link_bw[0][1] * kSlot / 1e9, p.host_bw[0] * kSlot / 1e9);
    EXPECT_FALSE(starpu_data_is_on_node(ha, STARPU_MAIN_RAM));
    add_one_on(ha, 0);
    ASSERT_EQ(hetpu_ckpt_wait("run", 3, HETPU_CKPT_TIER_LOCAL), 0) << hetpu_ckpt_last_error();
    expect_within_limits();
    ASSERT_EQ(hetpu_ckpt_restore("run", 3), 0) << hetpu_ckpt_last_error();
    ASSERT_EQ(starpu_data_acquire(ha, STARPU_R), 0);
    EXPECT_EQ(a, ramp(na, 8));
    starpu_data_release(ha);
    ASSERT_EQ(hetpu_ckpt_finalize(), 0) << hetpu_ckpt_last_error();
    starpu_data_unregister(ha);
    starpu_data_unregister(hb);
}

// A cache asked larger than a device's StarPU memory limit gets what the limit allows:
// chunks past it are refused, and StarPU's accounting never exceeds the limit.
TEST_F(CkptDevice, CacheStaysWithinTheDeviceMemoryLimit)
{
    const starpu_ssize_t total = starpu_memory_get_total(opencl_nodes[0]);
    ASSERT_GT(total, 0);
    ASSERT_LE(total, 64 << 20) << "run through device_tier.sh (STARPU_LIMIT_OPENCL_<n>_MEM)";
    ASSERT_EQ(hetpu_ckpt_init_from_string(config("size = \"1GiB\"\nchunk = \"1MiB\"\n").c_str()), 0)
        << hetpu_ckpt_last_error();
    hetpu_ckpt_stats s = stats();
    while (s.device_caches_growing) {  // a condition, not a deadline: growth always ends
        usleep(10000);
        expect_within_limits();
        s = stats();
    }
    expect_within_limits();
    EXPECT_EQ(s.device_chunk_refusals, 2u) << "one refused chunk per device ends its growth";
    EXPECT_GT(s.device_cache_bytes, 0u);
    EXPECT_LE(s.device_cache_bytes, 2u * static_cast<std::uint64_t>(total));
    ASSERT_EQ(hetpu_ckpt_finalize(), 0);
    ASSERT_EQ(hetpu_ckpt_init_from_string(config("size = \"50%\"\nchunk = \"1MiB\"\n").c_str()), 0)
        << hetpu_ckpt_last_error();
    do {
        usleep(10000);
        s = stats();
    } while (s.device_caches_growing);
    EXPECT_EQ(s.device_chunk_refusals, 0u);
    EXPECT_EQ(s.device_cache_bytes, 2u * static_cast<std::uint64_t>(total / 2 / (1 << 20) * (1 << 20)));
    expect_within_limits();
    ASSERT_EQ(hetpu_ckpt_finalize(), 0);
    for (unsigned node : opencl_nodes)
        EXPECT_EQ(starpu_memory_get_available(node), starpu_memory_get_total(node))
            << "cache chunks handed back to StarPU";
}

// A headroom the device cannot leave free would give the cache no memory: init refuses it,
// naming the setting and the device's memory, and the next init with a sane one works.
TEST_F(CkptDevice, HeadroomAsLargeAsTheDeviceIsAnError)
{
    const starpu_ssize_t total = starpu_memory_get_total(opencl_nodes[0]);
    ASSERT_GT(total, 0);
    ASSERT_LE(total, 64 << 20) << "run through device_tier.sh (STARPU_LIMIT_OPENCL_<n>_MEM)";
    EXPECT_EQ(hetpu_ckpt_init_from_string(config("size = \"1MiB\"\nchunk = \"1MiB\"\nheadroom = \"1GiB\"\n").c_str()),
              -EINVAL);
    const std::string err = hetpu_ckpt_last_error();
    EXPECT_NE(err.find("[device] headroom (1073741824 bytes) is not below the memory of StarPU memory node"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find(std::to_string(total) + " bytes"), std::string::npos) << err;
    ASSERT_EQ(hetpu_ckpt_init_from_string(config("size = \"1MiB\"\nchunk = \"1MiB\"\nheadroom = \"2MiB\"\n").c_str()),
              0)
        << hetpu_ckpt_last_error();
    ASSERT_EQ(hetpu_ckpt_finalize(), 0);
}

// A backward pass over device-resident data: the device cache holds 2 of 4 versions; with the
// restore order hinted, the older versions are read back into device 0's cache before their
// restores, which then copy device to device into the handle.
TEST_F(CkptDevice, HintedRestoresAreDeviceCacheHits)
{
    ASSERT_EQ(hetpu_ckpt_init_from_string(config("size = \"512KiB\"\nchunk = \"512KiB\"\nslot = \"64KiB\"\n").c_str()),
              0)
        << hetpu_ckpt_last_error();
    wait_caches_grown();
    const std::size_t n = 4 * kSlot / sizeof(float);
    std::vector<float> a = ramp(n, 0);
    starpu_data_handle_t ha;
    starpu_vector_data_register(&ha, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(a.data()), n, sizeof(float));
    ASSERT_EQ(hetpu_ckpt_protect("a", ha), 0);
    for (int v = 0; v < 4; ++v) {
        add_one_on(ha, 0);
        ASSERT_EQ(hetpu_ckpt_checkpoint("bw", v), 0) << hetpu_ckpt_last_error();
        ASSERT_EQ(hetpu_ckpt_wait("bw", v, HETPU_CKPT_TIER_LOCAL), 0) << hetpu_ckpt_last_error();
    }
    // Versions 2 and 3 each evicted an older one (flushed to the host tier: evictable).
    EXPECT_EQ(stats().device_evicted_bytes, 2 * n * sizeof(float));
    const int64_t order[] = {1, 0};
    ASSERT_EQ(hetpu_ckpt_prefetch_hint("bw", order, 2), 0);
    std::uint64_t before = stats().restored_from_device_bytes, prefetched = 0;
    for (int64_t v : order) {
        prefetched += n * sizeof(float);
        while (stats().device_prefetched_bytes < prefetched)  // a condition, not a deadline
            usleep(1000);
        ASSERT_EQ(hetpu_ckpt_restore("bw", v), 0) << hetpu_ckpt_last_error();
    }
    const hetpu_ckpt_stats s = stats();
    EXPECT_EQ(s.restored_from_device_bytes - before, 2 * n * sizeof(float)) << "both restores hit the device cache";
    EXPECT_EQ(s.restored_from_disk_bytes, 0u);
    EXPECT_FALSE(starpu_data_is_on_node(ha, STARPU_MAIN_RAM));
    ASSERT_EQ(starpu_data_acquire(ha, STARPU_R), 0);
    EXPECT_EQ(a, ramp(n, 1)) << "version 0";
    starpu_data_release(ha);
    ASSERT_EQ(hetpu_ckpt_finalize(), 0) << hetpu_ckpt_last_error();
    starpu_data_unregister(ha);
}
