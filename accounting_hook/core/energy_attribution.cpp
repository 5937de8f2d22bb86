// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/energy_attribution.h"

#include <algorithm>

namespace hetpu::accounting {

namespace {

using energy::Device;

// What the users of one device add up to.
struct DeviceSplit {
    double busy = 0;
    int workers = 0;
};

double share(const BusyByType &b, const DeviceSplit &split, double joules)
{
    return busy_time_part(joules, b.busy_s, b.workers, split.busy, split.workers);
}

}  // namespace

double busy_time_part(double joules, double busy_s, int workers, double device_busy_s, int device_workers)
{
    if (device_busy_s > 0)
        return energy::busy_share(joules, busy_s, device_busy_s);
    return device_workers > 0 ? joules * workers / device_workers : 0;
}

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

std::vector<ProcessorEnergy> attribute_repetition_energy(const std::vector<ProcessorRun> &runs,
                                                         const std::vector<DeviceReading> &readings, double elapsed_s,
                                                         const energy::PowerModel &model, bool opencl_on_cpu)
{
    std::vector<ProcessorEnergy> out(runs.size(), ProcessorEnergy{0, "none"});
    for (const DeviceReading &r : readings) {
        std::vector<std::size_t> on_device;
        double busy_total = 0;
        for (std::size_t i = 0; i < runs.size(); ++i)
            if (energy::device_of(runs[i].type, opencl_on_cpu) == r.device) {
                on_device.push_back(i);
                busy_total += runs[i].busy_s;
            }
        if (!r.measured) {
            for (std::size_t i : on_device) {
                const energy::WorkerPower &p = model.of(runs[i].type);
                out[i] = {std::max(0.0, p.active_w - p.idle_w) * runs[i].busy_s, r.source};
            }
            continue;
        }
        const double dynamic =
            std::max(0.0, energy::dynamic_joules(r.joules_before, r.joules_after, r.idle_w, elapsed_s));
        // A repetition where nothing was busy ran no block: nothing to attribute (no workers).
        for (std::size_t i : on_device)
            out[i] = {busy_time_part(dynamic, runs[i].busy_s, 0, busy_total, 0), r.source};
    }
    return out;
}

}  // namespace hetpu::accounting
