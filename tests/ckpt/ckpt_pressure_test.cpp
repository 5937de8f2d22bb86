// SPDX-License-Identifier: LGPL-2.1-or-later
// The device cache tier beside the MGB policy, under device memory pressure (run by
// tests/ckpt/device_pressure.sh: two PoCL OpenCL devices limited to 16 and 24 MiB,
// STARPU_SCHED=mgb, an arbiter segment of the test's own).
//
// The cache first takes all it can (a 1 GiB request, 2 MiB headroom). Then an application
// whose tasks run only on the devices, one at a time, works and checkpoints every pass: its
// data grows into the headroom and the cache must give chunks back to StarPU (flushed copies
// only); then a
// task needing 14 MiB, more than the arbiter has free on either device while the cache
// holds its chunks, can only be placed by MGB once the cache gives way to the arbiter's
// waiting task. Meanwhile a sampler checks that neither StarPU's accounting nor the arbiter's
// reservations ever exceed a device's limit; at the end every version restores byte-exact.
#include <hetpu/ckpt.h>
#include <hetpu/hetpu.h>

#include "node_arbiter/node_arbiter.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/add_one_codelet.h"

namespace {

constexpr std::uint64_t kMiB = 1 << 20;

std::vector<float> ramp(std::size_t n, float base)
{
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = base + static_cast<float>(i % 1000);
    return v;
}

hetpu_ckpt_stats stats()
{
    hetpu_ckpt_stats s{};
    EXPECT_EQ(hetpu_ckpt_get_stats(&s), 0) << hetpu_ckpt_last_error();
    return s;
}

// This process's memory-only reservations (the cache) and the reserved and free bytes of
// each arbiter device.
struct ArbiterView {
    std::uint64_t cache = 0;
    std::vector<std::uint64_t> reserved, capacity;
};
ArbiterView look(hetpu::mgb::NodeArbiter &a)
{
    ArbiterView v;
    a.with_ledger([&](hetpu::mgb::Ledger &l) {
        for (const hetpu::mgb::Grant &g : l.grants)
            if (g.id && g.pid == getpid() && g.algorithm == hetpu::mgb::kMemoryOnly)
                v.cache += g.bytes;
        for (unsigned d = 0; d < l.ndevices; ++d) {
            v.reserved.push_back(l.devices[d].reserved_bytes);
            v.capacity.push_back(l.devices[d].capacity());
        }
    });
    return v;
}

}  // namespace

TEST(CkptPressure, CacheGivesWayToTasksAndEveryVersionRestores)
{
    const char *arbiter_name = std::getenv("HETPU_MGB_ARBITER");
    ASSERT_NE(arbiter_name, nullptr) << "run through tests/ckpt/device_pressure.sh";
    ASSERT_EQ(hetpu_init(nullptr), 0);
    add_one_codelet_load();
    std::vector<unsigned> nodes;
    for (unsigned node = 0; node < starpu_memory_nodes_get_count(); ++node)
        if (starpu_node_get_kind(node) == STARPU_OPENCL_RAM)
            nodes.push_back(node);
    if (nodes.size() < 2) {
        add_one_codelet_unload();
        hetpu_shutdown();
        GTEST_SKIP() << "needs two OpenCL devices (PoCL: run through tests/ckpt/device_pressure.sh)";
    }
    ASSERT_STREQ(hetpu_policy_name(), "mgb");
    // Tasks that can run only on the devices: their data is device-resident, and a task that
    // does not fit waits for a device (it cannot fall back to the CPU).
    struct starpu_codelet cl = add_one_codelet;
    cl.cpu_funcs[0] = nullptr;
    cl.where = STARPU_OPENCL;

    char tmpl[] = "/tmp/hetpu-ckpt-pressure.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    const std::string toml = "[host]\nsize = \"64MiB\"\nincremental_init = false\n[local]\npath = \"" + dir +
                             "\"\n[device]\nsize = \"1GiB\"\nchunk = \"1MiB\"\nslot = \"64KiB\"\nheadroom = \"2MiB\"\n"
                             "regrow_after = 0.1\n";  // quiet spells within the run: regrowth is sampled too
    ASSERT_EQ(hetpu_ckpt_init_from_string(toml.c_str()), 0) << hetpu_ckpt_last_error();
    auto arbiter = hetpu::mgb::NodeArbiter::open_existing(arbiter_name);
    ASSERT_NE(arbiter, nullptr);

    // The sampler: StarPU's accounting and the arbiter's, against each device's limit.
    std::atomic<bool> sampling{true};
    std::atomic<long> samples{0}, starpu_over{0}, arbiter_over{0};
    std::thread sampler([&] {
        while (sampling) {
            for (unsigned node : nodes)
                if (starpu_memory_get_available(node) < 0)
                    ++starpu_over;
            const ArbiterView v = look(*arbiter);
            for (std::size_t d = 0; d < v.reserved.size(); ++d)
                if (v.reserved[d] > v.capacity[d])
                    ++arbiter_over;
            ++samples;
            usleep(200);
        }
    });

    hetpu_ckpt_stats s = stats();
    while (s.device_caches_growing) {  // a condition, not a deadline: growth always ends
        usleep(1000);
        s = stats();
    }
    // All it could get: each device's limit less the headroom and at most one more chunk.
    const std::uint64_t limits =
        static_cast<std::uint64_t>(starpu_memory_get_total(nodes[0]) + starpu_memory_get_total(nodes[1]));
    EXPECT_GE(s.device_cache_bytes, limits - 2 * 3 * kMiB);
    EXPECT_EQ(look(*arbiter).cache, s.device_cache_bytes) << "every chunk is reserved with the arbiter";

    // Phase 1: six 1 MiB vectors, a pass of device tasks and a checkpoint, six times.
    constexpr int kVectors = 6, kPasses = 6;
    const std::size_t n = kMiB / sizeof(float);
    std::vector<std::vector<float>> data;
    std::vector<starpu_data_handle_t> h(kVectors);
    for (int i = 0; i < kVectors; ++i) {
        data.push_back(ramp(n, 1000.0f * static_cast<float>(i)));
        starpu_vector_data_register(&h[i], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(data[i].data()), n,
                                    sizeof(float));
        ASSERT_EQ(hetpu_ckpt_protect(("v" + std::to_string(i)).c_str(), h[i]), 0) << hetpu_ckpt_last_error();
    }
    // One task at a time: each fits the arbiter's free memory (the cache leaves the headroom,
    // 2 MiB, and a task needs 1 MiB), so no task ever waits and whatever the cache gives back
    // here is StarPU's pressure alone: its data growing into the headroom.
    for (int pass = 0; pass < kPasses; ++pass) {
        for (int i = 0; i < kVectors; ++i) {
            ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h[i], 0), 0);
            ASSERT_EQ(starpu_task_wait_for_all(), 0);
        }
        ASSERT_EQ(hetpu_ckpt_checkpoint("app", pass), 0) << hetpu_ckpt_last_error();
    }
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    ASSERT_EQ(hetpu_ckpt_wait("app", kPasses - 1, HETPU_CKPT_TIER_LOCAL), 0) << hetpu_ckpt_last_error();
    s = stats();
    EXPECT_GT(s.device_path_captures, 0u) << "the versions were captured from device memory";
    EXPECT_GT(s.device_pressure_released_bytes, 0u)
        << "the data grew into the headroom (or tasks waited): chunks went back";
    const std::uint64_t released_by_starpu = s.device_pressure_released_bytes;

    // Phase 2: a 14 MiB vector. While the cache holds its chunks neither device has 14 MiB
    // free in the arbiter, so MGB can place its task only once the cache gives way.
    const ArbiterView before = look(*arbiter);
    for (std::size_t d = 0; d < before.reserved.size(); ++d)
        std::printf("before the 14 MiB task: arbiter device %zu has %.1f MiB free of %.1f (cache given back so far: "
                    "%.1f MiB)\n",
                    d, static_cast<double>(before.capacity[d] - before.reserved[d]) / kMiB,
                    static_cast<double>(before.capacity[d]) / kMiB, static_cast<double>(released_by_starpu) / kMiB);
    for (std::size_t d = 0; d < before.reserved.size(); ++d)
        ASSERT_LT(before.capacity[d] - before.reserved[d], 14 * kMiB)
            << "device " << d << " already has room: the phase would prove nothing";
    const std::size_t nbig = 14 * kMiB / sizeof(float);
    std::vector<float> big = ramp(nbig, 7.0f);
    starpu_data_handle_t hbig;
    starpu_vector_data_register(&hbig, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(big.data()), nbig, sizeof(float));
    ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, hbig, 0), 0);
    ASSERT_EQ(starpu_task_wait_for_all(), 0);
    EXPECT_GT(stats().device_pressure_released_bytes, released_by_starpu) << "the arbiter's waiting task got memory";
    starpu_data_unregister(hbig);
    EXPECT_EQ(big, ramp(nbig, 8.0f));

    // Every version restores byte-exact.
    for (int pass = 0; pass < kPasses; ++pass) {
        ASSERT_EQ(hetpu_ckpt_restore("app", pass), 0) << hetpu_ckpt_last_error();
        for (int i = 0; i < kVectors; ++i) {
            ASSERT_EQ(starpu_data_acquire(h[i], STARPU_R), 0);
            EXPECT_EQ(data[i], ramp(n, 1000.0f * static_cast<float>(i) + static_cast<float>(pass + 1)))
                << "vector " << i << ", version " << pass;
            starpu_data_release(h[i]);
        }
    }
    sampling = false;
    sampler.join();
    EXPECT_GT(samples.load(), 0);
    EXPECT_EQ(starpu_over.load(), 0) << "StarPU's memory accounting over a device's limit";
    EXPECT_EQ(arbiter_over.load(), 0) << "the arbiter's reservations over a device's capacity";
    s = stats();
    std::printf("device cache: %.1f MiB given back under pressure (%.1f MiB of flushed copies dropped), %.1f MiB "
                "taken again, %llu device-path captures, %ld samples within the limits\n",
                static_cast<double>(s.device_pressure_released_bytes) / kMiB,
                static_cast<double>(s.device_pressure_evicted_bytes) / kMiB,
                static_cast<double>(s.device_regrown_bytes) / kMiB,
                static_cast<unsigned long long>(s.device_path_captures), samples.load());
    ASSERT_EQ(hetpu_ckpt_finalize(), 0) << hetpu_ckpt_last_error();
    EXPECT_EQ(look(*arbiter).cache, 0u) << "finalize gives every reservation back";
    for (starpu_data_handle_t x : h)
        starpu_data_unregister(x);
    arbiter.reset();
    add_one_codelet_unload();
    hetpu_shutdown();
    std::system(("rm -rf '" + dir + "'").c_str());
}
