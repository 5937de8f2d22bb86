// SPDX-License-Identifier: LGPL-2.1-or-later
// The C API on a real StarPU node (1 CPU worker + 1 OpenCL worker with its own memory node):
// captures are ordered with the tasks around them, restores reach the device copies.
#include <hetpu/ckpt.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "runtime/start/starpu_compat.h"
#include "tests/integration/add_one_codelet.h"

namespace {

constexpr unsigned kN = 4096;

class CkptStarpu : public ::testing::Test {
protected:
    void SetUp() override
    {
        char tmpl[] = "/tmp/hetpu-ckpt-starpu.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir = tmpl;
        ASSERT_EQ(starpu_init(nullptr), 0);
        add_one_codelet_load();
    }
    void TearDown() override
    {
        add_one_codelet_unload();
        starpu_shutdown();
        std::system(("rm -rf '" + dir + "'").c_str());
    }
    std::string config(const std::string &extra = "")
    {
        return "[host]\nsize = \"1MiB\"\nincremental_init = false\n[local]\npath = \"" + dir + "\"\n" + extra;
    }
    // One add_one task on every worker (CPU and OpenCL), in submission order.
    static void add_one_everywhere(starpu_data_handle_t h)
    {
        for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
            struct starpu_task *t = starpu_task_create();
            t->cl = &add_one_codelet;
            t->handles[0] = h;
            t->execute_on_a_specific_worker = 1;
            t->workerid = w;
            ASSERT_EQ(starpu_task_submit(t), 0);
        }
    }
    std::string dir;
};

}  // namespace

TEST_F(CkptStarpu, CaptureIsOrderedWithTasksAndRestoreReachesDevices)
{
    ASSERT_EQ(hetpu_ckpt_init_from_string(config().c_str()), 0) << hetpu_ckpt_last_error();
    std::vector<float> y(kN, 0.0f);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(y.data()), kN, sizeof(float));
    ASSERT_EQ(hetpu_ckpt_protect("y", h), 0) << hetpu_ckpt_last_error();
    const float nw = static_cast<float>(starpu_worker_get_count());
    // Submitted without waiting: version 1 must see exactly the tasks before it.
    add_one_everywhere(h);
    ASSERT_EQ(hetpu_ckpt_checkpoint("run", 1), 0) << hetpu_ckpt_last_error();
    add_one_everywhere(h);
    ASSERT_EQ(hetpu_ckpt_checkpoint("run", 2), 0) << hetpu_ckpt_last_error();
    add_one_everywhere(h);
    ASSERT_EQ(hetpu_ckpt_wait("run", 2, HETPU_CKPT_TIER_LOCAL), 0) << hetpu_ckpt_last_error();
    starpu_task_wait_for_all();
    int64_t latest = -1;
    ASSERT_EQ(hetpu_ckpt_latest("run", &latest), 0);
    EXPECT_EQ(latest, 2);
    // Restore version 1 while the newest copy lives on the OpenCL device; then one more
    // task on every worker must start from version 1's values.
    ASSERT_EQ(hetpu_ckpt_restore("run", 1), 0) << hetpu_ckpt_last_error();
    add_one_everywhere(h);
    starpu_task_wait_for_all();
    ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
    for (unsigned i = 0; i < kN; ++i)
        ASSERT_EQ(y[i], 2 * nw) << i;
    starpu_data_release(h);
    ASSERT_EQ(hetpu_ckpt_finalize(), 0) << hetpu_ckpt_last_error();
    starpu_data_unregister(h);
}

TEST_F(CkptStarpu, ApiErrorsAreNamed)
{
    EXPECT_EQ(hetpu_ckpt_checkpoint("x", 1), -EINVAL);
    EXPECT_NE(std::string(hetpu_ckpt_last_error()).find("not initialised"), std::string::npos);
    EXPECT_EQ(hetpu_ckpt_init_from_string("[local]\npath = \"/nonexistent/ckpt\"\n"), -ENOENT);
    EXPECT_NE(std::string(hetpu_ckpt_last_error()).find("/nonexistent/ckpt"), std::string::npos);
    ASSERT_EQ(hetpu_ckpt_init_from_string(config().c_str()), 0) << hetpu_ckpt_last_error();
    EXPECT_EQ(hetpu_ckpt_init_from_string(config().c_str()), -EALREADY);
    EXPECT_EQ(hetpu_ckpt_checkpoint("empty", 1), -EINVAL) << "nothing protected yet";
    EXPECT_NE(std::string(hetpu_ckpt_last_error()).find("protect"), std::string::npos);
    float a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ASSERT_EQ(hetpu_ckpt_protect_buffer("a", a, sizeof a), 0);
    EXPECT_EQ(hetpu_ckpt_protect_buffer("a", a, sizeof a), -EEXIST);
    EXPECT_EQ(hetpu_ckpt_protect_buffer("bad/name", a, sizeof a), -EINVAL);
    ASSERT_EQ(hetpu_ckpt_checkpoint("buf", 7), 0) << hetpu_ckpt_last_error();
    a[0] = 100;
    ASSERT_EQ(hetpu_ckpt_restore("buf", 7), 0) << hetpu_ckpt_last_error();
    EXPECT_EQ(a[0], 1.0f);
    EXPECT_EQ(hetpu_ckpt_restore("buf", 8), -ENOENT);
    // A region of another size is refused before anything is written.
    ASSERT_EQ(hetpu_ckpt_unprotect("a"), 0);
    ASSERT_EQ(hetpu_ckpt_protect_buffer("a", a, 4), 0);
    a[1] = 42;
    EXPECT_EQ(hetpu_ckpt_restore("buf", 7), -EINVAL);
    EXPECT_EQ(a[1], 42.0f);
    ASSERT_EQ(hetpu_ckpt_finalize(), 0) << hetpu_ckpt_last_error();
}

TEST_F(CkptStarpu, DiskTierIsAnOutOfCoreMemoryNode)
{
    const int node = hetpu_ckpt_register_disk_node(dir.c_str(), 64 << 20);
    ASSERT_GE(node, 0) << "starpu_disk_register: " << node;
    EXPECT_EQ(hetpu_ckpt_register_disk_node((dir + "/missing").c_str(), 64 << 20), -ENOENT);
    // The bus model: StarPU 1.3 takes the tier's measured bandwidth, 1.4 gives a third-party
    // disk backend no way to record one (runtime/start/starpu_compat.h), so it predicts none.
    const double bandwidth = starpu_transfer_bandwidth(static_cast<unsigned>(node), STARPU_MAIN_RAM);
    if (HETPU_STARPU_RECORDS_DISK_BANDWIDTH)
        EXPECT_GT(bandwidth, 0.0) << "StarPU 1.3 should hold the disk tier's measured bandwidth";
    else
        EXPECT_FALSE(bandwidth > 0.0) << "StarPU 1.4 now records a backend's bandwidth: record hetpu's there too";
    // Data whose home is a file of the tier: tasks on the CPU and OpenCL workers read it from
    // the disk node, and unregistering writes the result back into the file.
    std::vector<float> init(kN);
    for (unsigned i = 0; i < kN; ++i)
        init[i] = static_cast<float>(i);
    {
        FILE *f = std::fopen((dir + "/input.bin").c_str(), "wb");
        ASSERT_NE(f, nullptr);
        ASSERT_EQ(std::fwrite(init.data(), sizeof(float), kN, f), kN);
        std::fclose(f);
    }
    void *obj = starpu_disk_open(node, const_cast<char *>("input.bin"), kN * sizeof(float));
    ASSERT_NE(obj, nullptr);
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, node, reinterpret_cast<uintptr_t>(obj), kN, sizeof(float));
    add_one_everywhere(h);
    starpu_task_wait_for_all();
    starpu_data_unregister(h);
    starpu_disk_close(node, obj, kN * sizeof(float));
    std::vector<float> back(kN);
    {
        FILE *f = std::fopen((dir + "/input.bin").c_str(), "rb");
        ASSERT_NE(f, nullptr);
        ASSERT_EQ(std::fread(back.data(), sizeof(float), kN, f), kN);
        std::fclose(f);
    }
    const float nw = static_cast<float>(starpu_worker_get_count());
    for (unsigned i = 0; i < kN; ++i)
        ASSERT_EQ(back[i], init[i] + nw) << i;
    // Main-memory data pushed to the disk node takes a file there, removed when freed.
    std::vector<float> y(init);
    starpu_data_handle_t g;
    starpu_vector_data_register(&g, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(y.data()), kN, sizeof(float));
    ASSERT_EQ(starpu_data_fetch_on_node(g, node, 0), 0);
    EXPECT_EQ(std::system(("ls -a '" + dir + "' | grep -q starpu-ooc").c_str()), 0) << "no allocation file";
    starpu_data_unregister(g);
    // StarPU caches freed allocations until shutdown; then every file must be gone.
    add_one_codelet_unload();
    starpu_shutdown();
    EXPECT_NE(std::system(("ls -a '" + dir + "' | grep -q starpu-ooc").c_str()), 0) << "allocation file left behind";
    ASSERT_EQ(starpu_init(nullptr), 0);  // for TearDown
    add_one_codelet_load();
}
