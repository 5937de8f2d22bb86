// SPDX-License-Identifier: LGPL-2.1-or-later
// A background thread that calls a function at a fixed period until destroyed. Sensor
// sources use it so no counter wrap is missed and so power can be integrated when a GPU
// has no energy counter.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace hetpu::energy {

class PeriodicSampler {
public:
    PeriodicSampler(std::chrono::milliseconds period, std::function<void()> sample);
    ~PeriodicSampler();
    PeriodicSampler(const PeriodicSampler &) = delete;
    PeriodicSampler &operator=(const PeriodicSampler &) = delete;

private:
    void loop();

    std::chrono::milliseconds period_;
    std::function<void()> sample_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace hetpu::energy
