// SPDX-License-Identifier: LGPL-2.1-or-later
#include "perfmodels/energy/fake_source.h"

namespace hetpu::energy {

double FakeSource::joules(Device d)
{
    std::lock_guard<std::mutex> lock(mutex_);
    return joules_[static_cast<int>(d)];
}

void FakeSource::add_busy(WorkerType t, double seconds)
{
    std::lock_guard<std::mutex> lock(mutex_);
    busy_[static_cast<int>(t)] += seconds;
}

double FakeSource::seconds() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return seconds_;
}

void FakeSource::set_joules(Device d, double j)
{
    std::lock_guard<std::mutex> lock(mutex_);
    joules_[static_cast<int>(d)] = j;
}

void FakeSource::set_seconds(double s)
{
    std::lock_guard<std::mutex> lock(mutex_);
    seconds_ = s;
}

double FakeSource::busy_seconds(WorkerType t) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return busy_[static_cast<int>(t)];
}

}  // namespace hetpu::energy
