// SPDX-License-Identifier: LGPL-2.1-or-later
// GPU energy from NVIDIA's NVML, loaded with dlopen so hetpu neither needs the driver to build
// nor fails without it. Uses nvmlDeviceGetTotalEnergyConsumption (mJ since driver load, Volta
// and later); a GPU without that counter has its power (nvmlDeviceGetPowerUsage, mW)
// integrated by a sampler thread instead. All visible GPUs are summed.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "perfmodels/energy/energy_source.h"
#include "perfmodels/energy/periodic_sampler.h"

namespace hetpu::energy {

class NvmlSource final : public EnergySource {
public:
    // `library` is the file to dlopen (default libnvidia-ml.so.1; HETPU_NVML_LIBRARY overrides
    // it, which the tests use to load a fake). Throws std::runtime_error saying why when NVML or
    // a GPU is missing.
    static std::unique_ptr<NvmlSource> open(const std::string &library,
                                            std::chrono::milliseconds power_period = std::chrono::milliseconds(100));
    ~NvmlSource() override;

    std::string name() const override { return "nvml"; }
    bool measured() const override { return true; }
    bool covers(Device d) const override { return d == Device::gpu; }
    double joules(Device d) override;
    void add_busy(WorkerType, double) override {}
    double seconds() const override;
    std::vector<double> gpu_joules() override;
    double gpu_counter_j(int index) override;

    int gpu_count() const { return static_cast<int>(gpus_.size()); }
    // How many GPUs fell back to integrating power (no energy counter).
    int integrated_count() const;

private:
    struct Api;
    struct Gpu {
        void *handle = nullptr;
        bool has_counter = false;
        unsigned long long first_mj = 0;
        double integrated_j = 0;  // power fallback
        double last_w = 0;
        std::chrono::steady_clock::time_point last_t;
    };
    NvmlSource() = default;
    void sample_power();

    void *lib_ = nullptr;
    std::unique_ptr<Api> api_;
    mutable std::mutex mutex_;
    std::vector<Gpu> gpus_;
    std::chrono::steady_clock::time_point opened_;
    std::unique_ptr<PeriodicSampler> sampler_;
};

}  // namespace hetpu::energy
