// SPDX-License-Identifier: LGPL-2.1-or-later
// Device energy split among worker types (a run) and processors (a calibration repetition)
// by busy time, every figure with its source.
#include <gtest/gtest.h>

#include "accounting_hook/core/energy_attribution.h"
#include "tests/unit/accounting/fake_energy_source.h"

using namespace hetpu::accounting;
using fakes::ScriptedSource;
using hetpu::energy::WorkerType;

TEST(EnergyAttribution, SensorJoulesSplitByBusyTimeModelFedTheSameBusyTime)
{
    ScriptedSource rapl("rapl", true, 90, 0, /*covers_gpu=*/false);
    ScriptedSource model("model", false, 60, 0);
    std::vector<BusyByType> busy = {{WorkerType::cpu, 2, 10, 2.0}, {WorkerType::opencl, 1, 5, 1.0}};
    auto u = attribute_energy(busy, &rapl, nullptr, &model, /*opencl_on_cpu=*/true);
    ASSERT_EQ(u.size(), 2u);
    EXPECT_EQ(u[0].worker_type, "cpu");
    EXPECT_EQ(u[0].energy_source, "rapl");
    EXPECT_DOUBLE_EQ(u[0].energy_j, 60);  // 2/3 of the CPU package
    EXPECT_DOUBLE_EQ(u[1].energy_j, 30);  // PoCL's OpenCL worker runs on the CPU
    EXPECT_DOUBLE_EQ(u[0].model_energy_j, 40);
    EXPECT_EQ(u[1].tasks, 5);
    EXPECT_DOUBLE_EQ(model.busy[WorkerType::cpu], 2.0);
    EXPECT_DOUBLE_EQ(model.busy[WorkerType::opencl], 1.0);
    EXPECT_TRUE(rapl.busy.count(WorkerType::cpu));  // sensors are told too (they may ignore it)
}

TEST(EnergyAttribution, GpuWorkersUseTheGpuSourceOrNone)
{
    ScriptedSource rapl("rapl", true, 100, 0, false);
    ScriptedSource nvml("nvml", true, 0, 500);
    std::vector<BusyByType> busy = {{WorkerType::cpu, 1, 1, 1.0}, {WorkerType::cuda, 2, 8, 4.0}};
    auto u = attribute_energy(busy, &rapl, &nvml, nullptr, false);
    EXPECT_EQ(u[1].energy_source, "nvml");
    EXPECT_DOUBLE_EQ(u[1].energy_j, 500);
    EXPECT_DOUBLE_EQ(u[0].energy_j, 100);
    auto none = attribute_energy(busy, &rapl, nullptr, nullptr, false);
    EXPECT_EQ(none[1].energy_source, "none");
    EXPECT_DOUBLE_EQ(none[1].energy_j, 0);
    // A real OpenCL GPU (not PoCL) counts as a GPU.
    auto ocl = attribute_energy({{WorkerType::opencl, 1, 1, 1.0}}, &rapl, &nvml, nullptr, false);
    EXPECT_EQ(ocl[0].energy_source, "nvml");
}

TEST(EnergyAttribution, IdleRunSplitsByWorkerCount)
{
    ScriptedSource model("model", false, 30, 0);
    auto u =
        attribute_energy({{WorkerType::cpu, 2, 0, 0}, {WorkerType::opencl, 1, 0, 0}}, &model, nullptr, &model, true);
    EXPECT_DOUBLE_EQ(u[0].energy_j, 20);
    EXPECT_DOUBLE_EQ(u[1].energy_j, 10);
    EXPECT_DOUBLE_EQ(model.busy[WorkerType::cpu], 0);  // fed once, not twice, when model is the source
    EXPECT_EQ(u[0].energy_source, "model");
}

// One calibration repetition (hetpu calibrate): per processor, dynamic energy.
TEST(RepetitionEnergy, ModelChargesEachProcessorItsOwnBusyTime)
{
    const hetpu::energy::PowerModel model = hetpu::energy::PowerModel::from_tdp(100, 4, 200);  // core 25 W, idle 7.5 W
    std::vector<ProcessorRun> runs = {{hetpu::energy::WorkerType::cpu, 2.0},
                                      {hetpu::energy::WorkerType::opencl, 1.0},
                                      {hetpu::energy::WorkerType::cuda, 0.5}};
    std::vector<DeviceReading> readings = {{hetpu::energy::Device::cpu, "model", false, 0, 0, 0},
                                           {hetpu::energy::Device::gpu, "model", false, 0, 0, 0}};
    auto e = attribute_repetition_energy(runs, readings, 3.0, model, true);
    EXPECT_DOUBLE_EQ(e[0].dynamic_j, 17.5 * 2.0);
    EXPECT_DOUBLE_EQ(e[1].dynamic_j, 17.5 * 1.0);
    EXPECT_DOUBLE_EQ(e[2].dynamic_j, 170.0 * 0.5);
    EXPECT_EQ(e[0].source, "model");
}

TEST(RepetitionEnergy, SensorDynamicEnergyIsSplitByBusyTime)
{
    const hetpu::energy::PowerModel model = hetpu::energy::PowerModel::from_tdp(100, 4, 200);
    std::vector<ProcessorRun> runs = {{hetpu::energy::WorkerType::cpu, 3.0},
                                      {hetpu::energy::WorkerType::opencl, 1.0},
                                      {hetpu::energy::WorkerType::cuda, 1.0}};
    // CPU package: 500 J over 4 s with 50 W idle -> 300 J dynamic, 3:1 between cpu and PoCL.
    std::vector<DeviceReading> readings = {{hetpu::energy::Device::cpu, "rapl", true, 1000, 1500, 50}};
    auto e = attribute_repetition_energy(runs, readings, 4.0, model, true);
    EXPECT_DOUBLE_EQ(e[0].dynamic_j, 225.0);
    EXPECT_DOUBLE_EQ(e[1].dynamic_j, 75.0);
    EXPECT_EQ(e[0].source, "rapl");
    EXPECT_EQ(e[2].source, "none");  // no reading covers the GPU
    // Idle-dominated noise never gives negative energy.
    readings[0].joules_after = 1100;
    EXPECT_EQ(attribute_repetition_energy(runs, readings, 4.0, model, true)[0].dynamic_j, 0.0);
}
