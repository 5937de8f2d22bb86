// SPDX-License-Identifier: LGPL-2.1-or-later
// Energy sources: counter wrap-around, RAPL over a fake powercap tree, NVML through a fake
// libnvidia-ml (counter and power-integration paths), the model's arithmetic, and the
// selection rules of HETPU_ENERGY.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "perfmodels/energy/counter_accumulator.h"
#include "perfmodels/energy/model_source.h"
#include "perfmodels/energy/nvml_source.h"
#include "perfmodels/energy/rapl_source.h"
#include "tests/unit/thrown_message.h"

namespace fs = std::filesystem;
using namespace hetpu::energy;

namespace {

void write(const fs::path &p, const std::string &s)
{
    fs::create_directories(p.parent_path());
    std::ofstream(p) << s << "\n";
}

struct FakePowercap {
    fs::path root;
    FakePowercap()
    {
        root = fs::temp_directory_path() /
               ("hetpu-powercap-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
        zone("intel-rapl:0", "package-0", 1000000, 4000000);
        zone("intel-rapl:0/intel-rapl:0:0", "core", 700000, 4000000);  // inside the package: not summed
        zone("intel-rapl:0/intel-rapl:0:1", "dram", 100, 4000000);
        zone("intel-rapl:1", "package-1", 3900000, 4000000);
        zone("intel-rapl-mmio:0", "package-0", 5, 4000000);  // a duplicate interface: ignored
    }
    ~FakePowercap() { fs::remove_all(root); }
    void zone(const std::string &dir, const std::string &name, unsigned long long uj, unsigned long long range)
    {
        write(root / dir / "name", name);
        write(root / dir / "max_energy_range_uj", std::to_string(range));
        set(dir, uj);
    }
    void set(const std::string &dir, unsigned long long uj) { write(root / dir / "energy_uj", std::to_string(uj)); }
};

std::string fake_nvml()
{
    const char *b = std::getenv("HETPU_BUILDDIR");
    return std::string(b ? b : ".") + "/tests/fakes/.libs/libfake_nvml.so";
}

}  // namespace

TEST(CounterAccumulator, AddsDeltasAndFoldsOneWrap)
{
    CounterAccumulator c(1000);
    EXPECT_EQ(c.feed(900), 0u);
    EXPECT_EQ(c.feed(950), 50u);
    EXPECT_EQ(c.feed(20), 50u + 50u + 20u);  // wrapped at 1000
    EXPECT_EQ(c.feed(20), 120u);
}

TEST(CounterAccumulator, UnknownRangeTreatsDropAsReset)
{
    CounterAccumulator c(0);
    c.feed(500);
    EXPECT_EQ(c.feed(100), 100u);  // counted from the reset, not a huge invented wrap
}

TEST(RaplSource, SumsPackagesAndDramAcrossWraps)
{
    FakePowercap pc;
    auto src = RaplSource::open(pc.root.string(), std::chrono::milliseconds(10000));
    ASSERT_TRUE(src);
    EXPECT_EQ(src->zones(), (std::vector<std::string>{"package-0", "dram", "package-1"}));
    EXPECT_DOUBLE_EQ(src->joules(Device::cpu), 0.0);
    EXPECT_DOUBLE_EQ(src->joules(Device::gpu), 0.0);
    EXPECT_FALSE(src->covers(Device::gpu));

    pc.set("intel-rapl:0", 3000000);                 // +2 J
    pc.set("intel-rapl:0/intel-rapl:0:1", 500100);   // +0.5 J
    pc.set("intel-rapl:0/intel-rapl:0:0", 3999999);  // core subzone: ignored
    pc.set("intel-rapl:1", 100000);                  // wrapped: +0.1 J to range, +0.1 J after
    EXPECT_NEAR(src->joules(Device::cpu), 2.0 + 0.5 + 0.2, 1e-9);
}

TEST(RaplSource, NoZonesExplainsWhy)
{
    EXPECT_THROW_MSG(RaplSource::open("/nonexistent/powercap"), std::runtime_error,
                     "rapl: no powercap package zone under /nonexistent/powercap (no RAPL on this CPU, or the "
                     "intel_rapl driver is not loaded)");
}

TEST(NvmlSource, ReadsEnergyCountersOfAllGpus)
{
    ::unsetenv("FAKE_NVML_MODE");
    auto src = NvmlSource::open(fake_nvml());
    ASSERT_TRUE(src);
    EXPECT_EQ(src->gpu_count(), 2);
    EXPECT_EQ(src->integrated_count(), 0);
    // The fake's counters start at 5 J and rise 1 J per read: the first read after open is +1 J
    // on each GPU, the second +2 J.
    EXPECT_DOUBLE_EQ(src->joules(Device::gpu), 2.0);
    EXPECT_DOUBLE_EQ(src->joules(Device::gpu), 4.0);
    EXPECT_DOUBLE_EQ(src->joules(Device::cpu), 0.0);
}

TEST(NvmlSource, IntegratesPowerWithoutACounter)
{
    ::setenv("FAKE_NVML_MODE", "power", 1);
    auto src = NvmlSource::open(fake_nvml(), std::chrono::milliseconds(5));
    ASSERT_TRUE(src);
    EXPECT_EQ(src->integrated_count(), 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double t_before = src->seconds();
    const double j = src->joules(Device::gpu);
    const double t_after = src->seconds();
    ::unsetenv("FAKE_NVML_MODE");
    // 2 GPUs x 250 W: joules() takes a sample itself, so the integral covers exactly the time
    // from open to that sample, which lies between the two clock reads however late the
    // sampler thread ran on a loaded machine.
    EXPECT_GE(j, 500.0 * t_before * (1 - 1e-9));
    EXPECT_LE(j, 500.0 * t_after * (1 + 1e-9));
}

TEST(NvmlSource, MissingLibraryExplainsWhy)
{
    EXPECT_THROW_MSG(NvmlSource::open("/nonexistent/libnvidia-ml.so.1"), std::runtime_error,
                     "nvml: cannot load /nonexistent/libnvidia-ml.so.1 (no NVIDIA driver on this machine?): ");
}

TEST(ModelSource, IdlePowerForWorkersPlusDynamicPowerForBusyTime)
{
    PowerModel m = PowerModel::from_tdp(150, 18, 400);
    EXPECT_DOUBLE_EQ(m.cpu_core.active_w, 150.0 / 18);
    ModelSource src(m, /*opencl_on_cpu=*/true);
    src.add_busy(WorkerType::cpu, 2.0);
    src.add_busy(WorkerType::opencl, 1.0);
    src.add_busy(WorkerType::cuda, 0.5);
    // Without worker counts: busy x active per type.
    EXPECT_NEAR(src.joules(Device::cpu), 3.0 * 150.0 / 18, 1e-6);
    EXPECT_NEAR(src.joules(Device::gpu), 0.5 * 400, 1e-6);

    ModelSource counted(m, true);
    counted.set_worker_count(WorkerType::cuda, 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    counted.add_busy(WorkerType::cuda, 0.01);
    const double t_before = counted.seconds();
    const double before = counted.joules(Device::gpu);
    const double t = counted.seconds();
    // Two GPUs idle for the elapsed time plus 10 ms of dynamic power (active - idle); the
    // elapsed time at the read lies between the two clock reads around it.
    EXPECT_GE(before, 2 * 60.0 * t_before + 0.01 * 340.0 - 1e-9);
    EXPECT_LE(before, 2 * 60.0 * t + 0.01 * 340.0 + 1e-9);
    // dynamic_joules subtracts the idle draw, leaving the work's energy.
    EXPECT_NEAR(dynamic_joules(0, 2 * 60.0 * t + 0.01 * 340.0, 2 * 60.0, t), 3.4, 1e-9);
}

TEST(ModelSource, OpenclOnAGpuIsGpuEnergy)
{
    ModelSource src(PowerModel::from_tdp(100, 10, 300), /*opencl_on_cpu=*/false);
    src.add_busy(WorkerType::opencl, 1.0);
    EXPECT_DOUBLE_EQ(src.joules(Device::cpu), 0.0);
    EXPECT_GT(src.joules(Device::gpu), 0.0);
}

TEST(PowerModel, RejectsNonPositiveFigures)
{
    EXPECT_THROW(PowerModel::from_tdp(0, 18, 400), std::invalid_argument);
    EXPECT_THROW(PowerModel::from_tdp(150, 0, 400), std::invalid_argument);
}

TEST(OpenEnergySources, AutoFallsBackToTheModelAndSaysWhy)
{
    ::setenv("HETPU_POWERCAP_ROOT", "/nonexistent", 1);
    ::setenv("HETPU_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    EnergySelection sel = open_energy_sources(PowerModel::from_tdp(150, 18, 400), "auto");
    ASSERT_NE(sel.for_device(Device::cpu), nullptr);
    EXPECT_EQ(sel.for_device(Device::cpu)->name(), "model");
    EXPECT_EQ(sel.for_device(Device::gpu)->name(), "model");
    EXPECT_EQ(sel.notes.size(), 2u);
    EXPECT_THROW(open_energy_sources(PowerModel::from_tdp(150, 18, 400), "rapl"), std::runtime_error);
    EXPECT_THROW(open_energy_sources(PowerModel::from_tdp(150, 18, 400), "joulemeter"), std::invalid_argument);
    ::unsetenv("HETPU_POWERCAP_ROOT");
    ::unsetenv("HETPU_NVML_LIBRARY");
}

TEST(OpenEnergySources, SensorsFirstModelForTheRest)
{
    FakePowercap pc;
    ::setenv("HETPU_POWERCAP_ROOT", pc.root.c_str(), 1);
    ::setenv("HETPU_NVML_LIBRARY", fake_nvml().c_str(), 1);
    EnergySelection sel = open_energy_sources(PowerModel::from_tdp(150, 18, 400), nullptr);
    EXPECT_EQ(sel.for_device(Device::cpu)->name(), "rapl");
    EXPECT_EQ(sel.for_device(Device::gpu)->name(), "nvml");
    EXPECT_TRUE(sel.notes.empty());
    EnergySelection forced = open_energy_sources(PowerModel::from_tdp(150, 18, 400), "model");
    EXPECT_EQ(forced.for_device(Device::cpu)->name(), "model");
    ::unsetenv("HETPU_POWERCAP_ROOT");
    ::unsetenv("HETPU_NVML_LIBRARY");
}
