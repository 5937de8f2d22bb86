// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/shared_device_charge.h"

#include <algorithm>
#include <stdexcept>

namespace hetpu::accounting {

std::vector<DeviceShareUsage> device_usages(const std::vector<SharedDevice> &devices, double pooled_gpu_joules,
                                            const std::string &pooled_source, double measured_s)
{
    size_t pooled = 0;
    for (const SharedDevice &d : devices)
        pooled += d.joules || d.split.segments > 0 ? 0 : 1;
    std::vector<DeviceShareUsage> out;
    for (const SharedDevice &d : devices) {
        DeviceShareUsage u;
        u.device = d.key;
        u.peers = d.peers;
        u.attached_h = d.time.attached_s / 3600.0;
        u.used_share_h = d.time.share_s / 3600.0;
        u.share_h = d.time.weight_s / 3600.0;
        u.fraction = mean_weight(d.time);
        if (d.split.segments > 0) {
            u.device_energy_j = d.split.to_j - d.split.from_j;
            u.energy_j = d.split.joules;
            u.device_from_j = d.split.from_j;
            u.device_to_j = d.split.to_j;
            u.energy_source = d.source;
            out.push_back(std::move(u));
            continue;
        }
        if (d.joules) {
            u.device_energy_j = *d.joules;
            u.energy_source = d.source;
        } else {
            u.device_energy_j = pooled > 0 ? pooled_gpu_joules / double(pooled) : 0.0;
            u.energy_source = pooled_source;
        }
        u.energy_j = own_device_joules(u.device_energy_j, measured_s, d.time);
        out.push_back(std::move(u));
    }
    return out;
}

void move_gpu_energy_to_devices(std::vector<WorkerTypeUsage> &workers, const std::vector<std::string> &gpu_types,
                                const std::vector<DeviceShareUsage> &devices)
{
    std::vector<WorkerTypeUsage *> gpu;
    double before = 0, after = 0;
    for (WorkerTypeUsage &w : workers)
        if (std::find(gpu_types.begin(), gpu_types.end(), w.worker_type) != gpu_types.end()) {
            gpu.push_back(&w);
            before += w.energy_j;
        }
    if (gpu.empty())
        return;
    std::string source;
    for (const DeviceShareUsage &d : devices) {
        after += d.energy_j;
        if (source.find(d.energy_source) == std::string::npos)
            source += (source.empty() ? "" : "+") + d.energy_source;
    }
    for (WorkerTypeUsage *w : gpu) {
        w->energy_j = before > 0 ? after * (w->energy_j / before) : after / double(gpu.size());
        if (!source.empty())
            w->energy_source = source;
    }
}

bool charge_gpu_by_use(const std::optional<std::string> &setting, bool shared_through_arbiter)
{
    if (!setting)
        return shared_through_arbiter;
    if (*setting == "use")
        return true;
    if (*setting == "allocation")
        return false;
    throw std::invalid_argument("HETPU_ACCOUNTING_GPU_SHARE='" + *setting +
                                "' is not a GPU share mode: set it to use or allocation");
}

}  // namespace hetpu::accounting
