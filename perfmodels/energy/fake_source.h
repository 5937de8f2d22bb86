// SPDX-License-Identifier: LGPL-2.1-or-later
// A scripted energy source for tests of whatever consumes energy figures (accounting,
// calibration): readings are set by the test, never measured.
#pragma once

#include <mutex>

#include "perfmodels/energy/energy_source.h"

namespace hetpu::energy {

class FakeSource final : public EnergySource {
public:
    explicit FakeSource(std::string name = "fake", bool measured = true) : name_(std::move(name)), measured_(measured)
    {}

    std::string name() const override { return name_; }
    bool measured() const override { return measured_; }
    bool covers(Device) const override { return true; }
    double joules(Device d) override;
    void add_busy(WorkerType t, double seconds) override;
    double seconds() const override;

    void set_joules(Device d, double j);
    void set_seconds(double s);
    double busy_seconds(WorkerType t) const;

private:
    std::string name_;
    bool measured_;
    mutable std::mutex mutex_;
    double joules_[2] = {0, 0};
    double busy_[3] = {0, 0, 0};
    double seconds_ = 0;
};

}  // namespace hetpu::energy
