// SPDX-License-Identifier: LGPL-2.1-or-later
// Energy estimated from busy time when no sensor exists (CI, most laptops, PoCL): every worker
// draws its idle power for the whole run and its active power while it runs a task. The
// figures come from a PowerModel (TDP defaults or a partition config), and reports say
// "model" so nobody mistakes them for measurements.
#pragma once

#include <array>
#include <atomic>
#include <chrono>

#include "perfmodels/energy/energy_source.h"

namespace hetpu::energy {

class ModelSource final : public EnergySource {
public:
    // `opencl_on_cpu`: OpenCL workers run on the CPU (PoCL), so their energy is CPU energy.
    ModelSource(const PowerModel &model, bool opencl_on_cpu);

    std::string name() const override { return "model"; }
    bool measured() const override { return false; }
    bool covers(Device) const override { return true; }
    double joules(Device d) override;
    // Lock-free: one relaxed atomic add per call, so the accounting hook can call it per task.
    void add_busy(WorkerType t, double seconds) override;
    void set_worker_count(WorkerType t, int n) override;
    double seconds() const override;

    double busy_seconds(WorkerType t) const;
    const PowerModel &model() const { return model_; }

private:
    static constexpr int kTypes = 3;
    PowerModel model_;
    bool opencl_on_cpu_;
    std::array<std::atomic<unsigned long long>, kTypes> busy_ns_{};
    std::array<std::atomic<int>, kTypes> workers_{};
    std::chrono::steady_clock::time_point opened_;
};

}  // namespace hetpu::energy
