// SPDX-License-Identifier: LGPL-2.1-or-later
// From share-time to the figures of a run's charge.
#include <gtest/gtest.h>

#include <stdexcept>

#include "accounting_hook/core/shared_device_charge.h"
#include "tests/unit/thrown_message.h"

using namespace hetpu::accounting;
using hetpu::test::thrown_message;

TEST(SharedDeviceCharge, OwnJoulesOrAnEqualPartOfThePooledGpuEnergy)
{
    SharedDevice measured{"opencl:0:0", 1, {10, 2, 5}, {}, 400.0, "nvml"};
    SharedDevice pooled{"opencl:0:1", 0, {10, 1, 10}, {}, std::nullopt, ""};
    const auto u = device_usages({measured, pooled}, 600, "model", 10);
    ASSERT_EQ(u.size(), 2u);
    EXPECT_DOUBLE_EQ(u[0].fraction, 0.5);
    EXPECT_DOUBLE_EQ(u[0].energy_j, 200);
    EXPECT_EQ(u[0].energy_source, "nvml");
    EXPECT_DOUBLE_EQ(u[0].share_h, 5.0 / 3600);
    EXPECT_DOUBLE_EQ(u[1].device_energy_j, 600);  // the only pooled device
    EXPECT_DOUBLE_EQ(u[1].energy_j, 600);         // alone: all of it
    EXPECT_EQ(u[1].energy_source, "model");
}

TEST(SharedDeviceCharge, WithoutASplitTheTimeBeforeAttachingWeighsNothing)
{
    // Measured over a 10 s run, attached (alone) for the last 8: 8 s at the mean power. The
    // mean weight while attached (1) applied to the whole run would give all 400 J, and the
    // start-up's 80 J would be charged twice once another process used the device then.
    SharedDevice late{"opencl:0:0", 0, {8, 8, 8}, {}, 400.0, "nvml"};
    const auto u = device_usages({late}, 0, "none", 10);
    EXPECT_DOUBLE_EQ(u[0].energy_j, 320);
    EXPECT_DOUBLE_EQ(u[0].fraction, 1);  // the GPU fraction is the mean while attached
    EXPECT_FALSE(u[0].device_from_j);
}

TEST(SharedDeviceCharge, ASplitAtTheCounterReadingsIsChargedAsItIs)
{
    SharedDevice split{"opencl:0:0", 2, {10, 2, 4}, {123, 5000, 5400, 7}, 999.0, "nvml"};
    const auto u = device_usages({split}, 0, "none", 10);
    EXPECT_DOUBLE_EQ(u[0].energy_j, 123);
    EXPECT_DOUBLE_EQ(u[0].device_energy_j, 400);  // over its interval, not the run
    ASSERT_TRUE(u[0].device_from_j && u[0].device_to_j);
    EXPECT_DOUBLE_EQ(*u[0].device_from_j, 5000);
    EXPECT_DOUBLE_EQ(*u[0].device_to_j, 5400);
    EXPECT_EQ(u[0].energy_source, "nvml");
}

TEST(SharedDeviceCharge, GpuWorkerEnergyBecomesTheDeviceParts)
{
    std::vector<WorkerTypeUsage> w = {{"cpu", 1, 5, 1, 10, "rapl", 10}, {"opencl", 1, 5, 1, 600, "nvml", 100}};
    DeviceShareUsage d;
    d.energy_j = 150;
    d.energy_source = "nvml";
    move_gpu_energy_to_devices(w, {"cuda", "opencl"}, {d});
    EXPECT_DOUBLE_EQ(w[0].energy_j, 10);  // CPU untouched
    EXPECT_DOUBLE_EQ(w[1].energy_j, 150);
    EXPECT_EQ(w[1].energy_source, "nvml");
}

TEST(SharedDeviceCharge, ModeSetting)
{
    EXPECT_TRUE(charge_gpu_by_use(std::nullopt, true));
    EXPECT_FALSE(charge_gpu_by_use(std::nullopt, false));
    EXPECT_FALSE(charge_gpu_by_use(std::string("allocation"), true));
    EXPECT_TRUE(charge_gpu_by_use(std::string("use"), false));
    EXPECT_NE(thrown_message<std::invalid_argument>([] {
                  charge_gpu_by_use(std::string("half"), true);
              }).find("set it to use or allocation"),
              std::string::npos);
}
