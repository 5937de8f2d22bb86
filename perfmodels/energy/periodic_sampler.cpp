// SPDX-License-Identifier: LGPL-2.1-or-later
#include "perfmodels/energy/periodic_sampler.h"

namespace hetpu::energy {

PeriodicSampler::PeriodicSampler(std::chrono::milliseconds period, std::function<void()> sample)
    : period_(period), sample_(std::move(sample)), thread_([this] { loop(); })
{}

PeriodicSampler::~PeriodicSampler()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void PeriodicSampler::loop()
{
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, period_, [this] { return stop_; })) {
        lock.unlock();
        sample_();
        lock.lock();
    }
}

}  // namespace hetpu::energy
