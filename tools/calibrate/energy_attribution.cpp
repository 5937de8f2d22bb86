// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tools/calibrate/energy_attribution.h"

#include <algorithm>

namespace hetpu::calibrate {

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
        for (std::size_t i : on_device)
            out[i] = {energy::busy_share(dynamic, runs[i].busy_s, busy_total), r.source};
    }
    return out;
}

}  // namespace hetpu::calibrate
