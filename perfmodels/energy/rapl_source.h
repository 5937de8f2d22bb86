// SPDX-License-Identifier: LGPL-2.1-or-later
// CPU energy from Intel/AMD RAPL through the Linux powercap sysfs tree: every package zone
// (intel-rapl:N) plus its DRAM subzone when present, summed. Counters wrap, so a sampler
// thread reads them often enough to see each wrap.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "perfmodels/energy/counter_accumulator.h"
#include "perfmodels/energy/energy_source.h"
#include "perfmodels/energy/periodic_sampler.h"

namespace hetpu::energy {

class RaplSource final : public EnergySource {
public:
    // `root` is the powercap directory (/sys/class/powercap; tests point it at a fake tree).
    // Throws std::runtime_error saying why when no readable package zone exists.
    static std::unique_ptr<RaplSource> open(const std::string &root,
                                            std::chrono::milliseconds period = std::chrono::milliseconds(1000));
    ~RaplSource() override;

    std::string name() const override { return "rapl"; }
    bool measured() const override { return true; }
    bool covers(Device d) const override { return d == Device::cpu; }
    double joules(Device d) override;
    void add_busy(WorkerType, double) override {}
    double seconds() const override;

    // The zone names summed (e.g. "package-0", "dram"), for reports.
    std::vector<std::string> zones() const;

private:
    struct Zone {
        std::string name;
        std::string energy_path;
        CounterAccumulator counter;
    };
    RaplSource() = default;
    void sample_all();

    mutable std::mutex mutex_;
    std::vector<Zone> zones_;
    std::chrono::steady_clock::time_point opened_;
    std::unique_ptr<PeriodicSampler> sampler_;
};

}  // namespace hetpu::energy
