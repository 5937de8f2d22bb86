// SPDX-License-Identifier: LGPL-2.1-or-later
// The device cache tier on real CUDA device memory (run by tests/ckpt/device_cuda.sh; skipped,
// saying why, in a build without CUDA or on a machine without a CUDA device): a handle whose
// only valid copy is on a GPU is captured device to device, restored straight into the GPU
// (from the cache, and after a restart from disk), byte-exact; with two GPUs or more, a
// device whose cache is too small sends its remainder to the peer GPU as the min-time
// max-flow schedule over StarPU's calibrated bandwidths says, and it restores byte-exact.
// No CUDA kernel is needed: the data is written and read inside StarPU acquisitions on the
// device's memory node with cudaMemcpy.
#include "config.h"

#include <hetpu/ckpt.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#if defined(STARPU_USE_CUDA) && defined(HETPU_HAVE_CUDA)
#include <cuda_runtime.h>

#include "ckpt_backend/core/peer_schedule.h"

namespace {

constexpr std::uint64_t kMiB = 1 << 20, kSlot = 64 << 10;

std::vector<float> ramp(std::size_t n, float base)
{
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = base + static_cast<float>(i % 1000);
    return v;
}

class CkptCuda : public ::testing::Test {
protected:
    void SetUp() override
    {
        setenv("HETPU_MGB_ARBITER", "off", 1);  // the cache alone: no node-wide segment
        char tmpl[] = "/tmp/hetpu-ckpt-cuda.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir = tmpl;
        ASSERT_EQ(starpu_init(nullptr), 0);
        started = true;
        for (unsigned node = 0; node < starpu_memory_nodes_get_count(); ++node)
            if (starpu_node_get_kind(node) == STARPU_CUDA_RAM)
                nodes.push_back(node);
        if (nodes.empty()) {
            std::printf("SKIP: no CUDA device (StarPU found none): the device tier's CUDA path is compiled but "
                        "not run here\n");
            GTEST_SKIP() << "no CUDA device";
        }
    }
    void TearDown() override
    {
        if (started)
            starpu_shutdown();
        std::system(("rm -rf '" + dir + "'").c_str());
    }
    std::string config(const std::string &device) const
    {
        return "[host]\nsize = \"64MiB\"\nincremental_init = false\n[local]\npath = \"" + dir + "\"\n[device]\n" +
               device;
    }
    static hetpu_ckpt_stats stats()
    {
        hetpu_ckpt_stats s{};
        EXPECT_EQ(hetpu_ckpt_get_stats(&s), 0) << hetpu_ckpt_last_error();
        return s;
    }
    static void wait_caches_grown()
    {
        while (stats().device_caches_growing)  // a condition, not a deadline
            usleep(1000);
    }
    static float *device_ptr(starpu_data_handle_t h, unsigned node)
    {
        auto *v = static_cast<struct starpu_vector_interface *>(starpu_data_get_interface_on_node(h, node));
        return reinterpret_cast<float *>(STARPU_VECTOR_GET_PTR(v));
    }
    // After this the handle's only valid copy is on `node` and holds `values`.
    static void write_on_device(starpu_data_handle_t h, unsigned node, const std::vector<float> &values)
    {
        ASSERT_EQ(starpu_data_acquire_on_node(h, static_cast<int>(node), STARPU_W), 0);
        cudaSetDevice(starpu_memory_node_get_devid(node));
        ASSERT_EQ(cudaMemcpy(device_ptr(h, node), values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice),
                  cudaSuccess);
        starpu_data_release_on_node(h, static_cast<int>(node));
    }
    static std::vector<float> read_on_device(starpu_data_handle_t h, unsigned node, std::size_t n)
    {
        std::vector<float> out(n);
        EXPECT_EQ(starpu_data_acquire_on_node(h, static_cast<int>(node), STARPU_R), 0);
        cudaSetDevice(starpu_memory_node_get_devid(node));
        EXPECT_EQ(cudaMemcpy(out.data(), device_ptr(h, node), n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
        starpu_data_release_on_node(h, static_cast<int>(node));
        return out;
    }

    std::string dir;
    bool started = false;
    std::vector<unsigned> nodes;
};

}  // namespace

TEST_F(CkptCuda, CaptureAndRestoreOnDeviceMemory)
{
    ASSERT_EQ(hetpu_ckpt_init_from_string(config("size = \"8MiB\"\nchunk = \"1MiB\"\nslot = \"64KiB\"\n").c_str()), 0)
        << hetpu_ckpt_last_error();
    wait_caches_grown();
    const std::size_t n = kMiB;  // 4 MiB of floats
    std::vector<float> host(n, 0);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(host.data()), n, sizeof(float));
    ASSERT_EQ(hetpu_ckpt_protect("x", h), 0);
    write_on_device(h, nodes[0], ramp(n, 1));
    ASSERT_EQ(hetpu_ckpt_checkpoint("cuda", 1), 0) << hetpu_ckpt_last_error();
    ASSERT_EQ(hetpu_ckpt_wait("cuda", 1, HETPU_CKPT_TIER_DEVICE), 0) << hetpu_ckpt_last_error();
    hetpu_ckpt_stats s = stats();
    EXPECT_EQ(s.device_path_captures, 1u);
    EXPECT_EQ(s.device_local_bytes, n * sizeof(float)) << "device to device, in the GPU's own cache";
    EXPECT_EQ(s.device_to_host_at_capture_bytes, 0u);
    EXPECT_FALSE(starpu_data_is_on_node(h, STARPU_MAIN_RAM)) << "no copy to main memory before resuming";
    write_on_device(h, nodes[0], ramp(n, 9));  // the application goes on
    ASSERT_EQ(hetpu_ckpt_restore("cuda", 1), 0) << hetpu_ckpt_last_error();
    s = stats();
    EXPECT_EQ(s.restored_into_device_bytes, n * sizeof(float));
    EXPECT_EQ(s.restored_from_device_bytes, n * sizeof(float)) << "from the device cache";
    EXPECT_EQ(read_on_device(h, nodes[0], n), ramp(n, 1));
    ASSERT_EQ(hetpu_ckpt_wait("cuda", 1, HETPU_CKPT_TIER_LOCAL), 0) << hetpu_ckpt_last_error();
    ASSERT_EQ(hetpu_ckpt_finalize(), 0) << hetpu_ckpt_last_error();

    // A later run: the version comes from disk, through a staging buffer, into the GPU.
    ASSERT_EQ(hetpu_ckpt_init_from_string(config("size = \"8MiB\"\nchunk = \"1MiB\"\nslot = \"64KiB\"\n").c_str()), 0)
        << hetpu_ckpt_last_error();
    ASSERT_EQ(hetpu_ckpt_protect("x", h), 0);
    write_on_device(h, nodes[0], ramp(n, 5));
    ASSERT_EQ(hetpu_ckpt_restore("cuda", 1), 0) << hetpu_ckpt_last_error();
    s = stats();
    EXPECT_EQ(s.restored_from_disk_bytes, n * sizeof(float));
    EXPECT_EQ(s.restored_into_device_bytes, n * sizeof(float));
    EXPECT_EQ(read_on_device(h, nodes[0], n), ramp(n, 1));
    ASSERT_EQ(hetpu_ckpt_finalize(), 0) << hetpu_ckpt_last_error();
    starpu_data_unregister(h);
}

// GPU 0's cache (1 MiB) cannot hold its 3 MiB handle: the remainder goes to GPU 1's cache and
// the host exactly as schedule_min_time_max_flow says over StarPU's bus calibration, copied
// GPU to GPU (cudaMemcpyPeerAsync), and restores byte-exact.
TEST_F(CkptCuda, PeerTransferFollowsTheFlowSchedule)
{
    if (nodes.size() < 2) {
        std::printf("SKIP: one CUDA device: the peer transfer needs two\n");
        GTEST_SKIP() << "one CUDA device: the peer transfer needs two";
    }
    ASSERT_EQ(hetpu_ckpt_init_from_string(
                  config("size = \"1MiB\"\nchunk = \"1MiB\"\nslot = \"64KiB\"\npeer_schedule = \"flow\"\n").c_str()),
              0)
        << hetpu_ckpt_last_error();
    wait_caches_grown();
    const std::size_t n = 3 * kMiB / sizeof(float);
    std::vector<float> host(n, 0);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(host.data()), n, sizeof(float));
    ASSERT_EQ(hetpu_ckpt_protect("x", h), 0);
    write_on_device(h, nodes[0], ramp(n, 3));
    ASSERT_EQ(hetpu_ckpt_checkpoint("peer", 1), 0) << hetpu_ckpt_last_error();
    ASSERT_EQ(hetpu_ckpt_wait("peer", 1, HETPU_CKPT_TIER_DEVICE), 0) << hetpu_ckpt_last_error();
    // GPU 0 keeps 16 slots and ships 32; every other GPU has 16 spare.
    hetpu::ckpt::PeerProblem p;
    const std::size_t g = nodes.size();
    p.remainder.assign(g, 0);
    p.remainder[0] = 32;
    p.spare.assign(g, 16);
    p.spare[0] = 0;
    auto bw = [](unsigned from, unsigned to) {
        const double mbs = starpu_transfer_bandwidth(from, to);
        return (std::isfinite(mbs) && mbs > 0 ? mbs * 1e6 : 10e9) / kSlot;
    };
    p.link_bw.assign(g, std::vector<double>(g, 0));
    for (std::size_t i = 0; i < g; ++i)
        for (std::size_t j = 0; j < g; ++j)
            if (i != j)
                p.link_bw[i][j] = bw(nodes[i], nodes[j]);
    for (std::size_t i = 0; i < g; ++i)
        p.host_bw.push_back(bw(nodes[i], STARPU_MAIN_RAM));
    const hetpu::ckpt::PeerSchedule want = hetpu::ckpt::schedule_min_time_max_flow(p);
    std::uint64_t peer = 0, to_host = 0;
    for (const hetpu::ckpt::Transfer &t : want.transfers)
        (t.to == hetpu::ckpt::kHost ? to_host : peer) += t.bytes;
    const hetpu_ckpt_stats s = stats();
    EXPECT_EQ(s.peer_schedules, 1u);
    EXPECT_EQ(s.device_local_bytes, 16 * kSlot);
    EXPECT_EQ(s.device_peer_bytes, peer * kSlot);
    EXPECT_EQ(s.device_to_host_at_capture_bytes, to_host * kSlot);
    EXPECT_GT(s.device_peer_bytes, 0u) << "some of the remainder went GPU to GPU";
    std::printf("flow schedule on %zu GPUs: %llu slots to peers, %llu to the host (GPU0->GPU1 %.3g GB/s, "
                "GPU0->host %.3g GB/s)\n",
                g, static_cast<unsigned long long>(peer), static_cast<unsigned long long>(to_host),
                p.link_bw[0][1] * kSlot / 1e9, p.host_bw[0] * kSlot / 1e9);
    write_on_device(h, nodes[0], ramp(n, 0));
    ASSERT_EQ(hetpu_ckpt_restore("peer", 1), 0) << hetpu_ckpt_last_error();
    EXPECT_EQ(read_on_device(h, nodes[0], n), ramp(n, 3));
    ASSERT_EQ(hetpu_ckpt_finalize(), 0) << hetpu_ckpt_last_error();
    starpu_data_unregister(h);
}

#else

TEST(CkptCuda, NeedsACudaBuild)
{
    std::printf("SKIP: built without CUDA (Debian's StarPU 1.3 has none): ./run cuda-check builds this test "
                "against StarPU 1.4 with CUDA; it runs on a machine with a CUDA device\n");
    GTEST_SKIP() << "built without CUDA";
}

#endif
