// SPDX-License-Identifier: LGPL-2.1-or-later
#include "perfmodels/energy/model_source.h"

#include <algorithm>

namespace hetpu::energy {

namespace {

int index_of(WorkerType t) { return static_cast<int>(t); }

}  // namespace

ModelSource::ModelSource(const PowerModel &model, bool opencl_on_cpu)
    : model_(model), opencl_on_cpu_(opencl_on_cpu), opened_(std::chrono::steady_clock::now())
{}

void ModelSource::add_busy(WorkerType t, double seconds)
{
    if (seconds > 0)
        busy_ns_[index_of(t)].fetch_add(static_cast<unsigned long long>(seconds * 1e9), std::memory_order_relaxed);
}

void ModelSource::set_worker_count(WorkerType t, int n) { workers_[index_of(t)].store(std::max(0, n)); }

double ModelSource::busy_seconds(WorkerType t) const
{
    return static_cast<double>(busy_ns_[index_of(t)].load(std::memory_order_relaxed)) * 1e-9;
}

double ModelSource::seconds() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_).count();
}

double ModelSource::joules(Device d)
{
    const double elapsed = seconds();
    double j = 0;
    for (WorkerType t : {WorkerType::cpu, WorkerType::opencl, WorkerType::cuda}) {
        if (device_of(t, opencl_on_cpu_) != d)
            continue;
        const WorkerPower &p = model_.of(t);
        const double busy = busy_seconds(t);
        // Idle power over the run for the workers declared; without a count, only over the
        // busy time (busy x active), never less than what the work itself drew.
        const double present = std::max(workers_[index_of(t)].load() * elapsed, busy);
        j += p.idle_w * present + (p.active_w - p.idle_w) * busy;
    }
    return j;
}

}  // namespace hetpu::energy
