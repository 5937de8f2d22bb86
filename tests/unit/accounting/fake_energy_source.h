// SPDX-License-Identifier: LGPL-2.1-or-later
// A scripted energy source for the accounting tests: fixed joules per device, and a record
// of the busy time it was fed.
#pragma once

#include <map>
#include <string>

#include "perfmodels/energy/energy_source.h"

namespace hetpu::accounting::fakes {

class ScriptedSource : public energy::EnergySource {
public:
    ScriptedSource(std::string name, bool measured, double cpu_j, double gpu_j, bool covers_gpu = true)
        : name_(std::move(name)), measured_(measured), cpu_j_(cpu_j), gpu_j_(gpu_j), covers_gpu_(covers_gpu)
    {}
    std::string name() const override { return name_; }
    bool measured() const override { return measured_; }
    bool covers(energy::Device d) const override { return d == energy::Device::cpu || covers_gpu_; }
    double joules(energy::Device d) override { return d == energy::Device::cpu ? cpu_j_ : (covers_gpu_ ? gpu_j_ : 0); }
    void add_busy(energy::WorkerType t, double s) override { busy[t] += s; }
    double seconds() const override { return 1; }
    std::map<energy::WorkerType, double> busy;

private:
    std::string name_;
    bool measured_;
    double cpu_j_, gpu_j_;
    bool covers_gpu_;
};

}  // namespace hetpu::accounting::fakes
