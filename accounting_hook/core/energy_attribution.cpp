// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/energy_attribution.h"

namespace hetpu::accounting {

namespace {

using energy::Device;

// Joules of `d` per unit of busy time of the types on `d`, or per worker when nothing was
// busy (a run that never executed a task still drew its share).
struct DeviceSplit {
    double busy = 0;
    int workers = 0;
};

double share(const BusyByType &b, const DeviceSplit &split, double joules)
{
    if (split.busy > 0)
        return energy::busy_share(joules, b.busy_s, split.busy);
    return split.workers > 0 ? joules * b.workers / split.workers : 0;
}

}  // namespace

std::vector<WorkerTypeUsage> attribute_energy(const std::vector<BusyByType> &busy, energy::EnergySource *cpu_source,
                                              energy::EnergySource *gpu_source, energy::EnergySource *model,
                                              bool opencl_on_cpu)
{
    DeviceSplit split[2];
    for (const BusyByType &b : busy) {
        const Device d = energy::device_of(b.type, opencl_on_cpu);
        DeviceSplit &s = split[d == Device::cpu ? 0 : 1];
        s.busy += b.busy_s;
        s.workers += b.workers;
        // Sensors ignore busy time; the model (and a model standing in for a sensor) needs it.
        energy::EnergySource *src = d == Device::cpu ? cpu_source : gpu_source;
        if (src && src != model)
            src->add_busy(b.type, b.busy_s);
        if (model)
            model->add_busy(b.type, b.busy_s);
    }
    double joules[2] = {0, 0}, model_joules[2] = {0, 0};
    energy::EnergySource *src[2] = {cpu_source, gpu_source};
    const Device devices[2] = {Device::cpu, Device::gpu};
    for (int i = 0; i < 2; ++i) {
        if (src[i] && src[i]->covers(devices[i]))
            joules[i] = src[i]->joules(devices[i]);
        if (model && model->covers(devices[i]))
            model_joules[i] = src[i] == model ? joules[i] : model->joules(devices[i]);  // one reading per source
    }
    std::vector<WorkerTypeUsage> out;
    for (const BusyByType &b : busy) {
        const int i = energy::device_of(b.type, opencl_on_cpu) == Device::cpu ? 0 : 1;
        WorkerTypeUsage u;
        u.worker_type = energy::worker_type_name(b.type);
        u.workers = b.workers;
        u.tasks = b.tasks;
        u.busy_s = b.busy_s;
        u.energy_source = src[i] && src[i]->covers(devices[i]) ? src[i]->name() : "none";
        u.energy_j = share(b, split[i], joules[i]);
        u.model_energy_j = share(b, split[i], model_joules[i]);
        out.push_back(u);
    }
    return out;
}

}  // namespace hetpu::accounting
