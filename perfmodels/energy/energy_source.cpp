// SPDX-License-Identifier: LGPL-2.1-or-later
#include "common/settings.h"
#include "perfmodels/energy/energy_source.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "perfmodels/energy/model_source.h"
#include "perfmodels/energy/nvml_source.h"
#include "perfmodels/energy/rapl_source.h"

namespace hetpu::energy {

const char *device_name(Device d) { return d == Device::cpu ? "cpu" : "gpu"; }

const char *worker_type_name(WorkerType t)
{
    switch (t) {
    case WorkerType::cpu: return "cpu";
    case WorkerType::opencl: return "opencl";
    case WorkerType::cuda: return "cuda";
    }
    return "?";
}

Device device_of(WorkerType t, bool opencl_on_cpu)
{
    if (t == WorkerType::cpu || (t == WorkerType::opencl && opencl_on_cpu))
        return Device::cpu;
    return Device::gpu;
}

const WorkerPower &PowerModel::of(WorkerType t) const
{
    switch (t) {
    case WorkerType::cpu: return cpu_core;
    case WorkerType::opencl: return opencl;
    case WorkerType::cuda: return cuda;
    }
    return cpu_core;
}

PowerModel PowerModel::from_tdp(double cpu_tdp_w, int cores_per_socket, double gpu_tdp_w)
{
    if (!(cpu_tdp_w > 0) || cores_per_socket <= 0 || !(gpu_tdp_w > 0))
        throw std::invalid_argument("power model: CPU TDP, cores per socket and GPU TDP must be positive (got " +
                                    std::to_string(cpu_tdp_w) + " W, " + std::to_string(cores_per_socket) + " cores, " +
                                    std::to_string(gpu_tdp_w) + " W)");
    PowerModel m;
    // A busy core draws its share of the socket's TDP; idle silicon still leaks about a
    // third of it (CPUs) or a sixth (GPUs, which clock down harder). Sites with measured
    // figures put them in the partition config instead.
    m.cpu_core.active_w = cpu_tdp_w / cores_per_socket;
    m.cpu_core.idle_w = 0.3 * m.cpu_core.active_w;
    m.opencl = m.cpu_core;
    m.cuda.active_w = gpu_tdp_w;
    m.cuda.idle_w = 0.15 * gpu_tdp_w;
    return m;
}

EnergySource *EnergySelection::for_device(Device d) const
{
    for (const auto &s : sources)
        if (s->covers(d))
            return s.get();
    return nullptr;
}

double EnergySource::gpu_counter_j(int index)
{
    (void)index;
    return std::nan("");
}

double dynamic_joules(double joules_before, double joules_after, double idle_w, double seconds)
{
    return (joules_after - joules_before) - idle_w * seconds;
}

EnergySelection open_energy_sources(const PowerModel &model, const char *forced, bool opencl_on_cpu)
{
    const Settings settings;
    std::string want;
    if (forced && *forced) {
        want = forced;
        if (want != "auto" && want != "rapl" && want != "nvml" && want != "model")
            throw std::invalid_argument("energy source '" + want + "' is not one: use rapl, nvml, model or auto");
    } else {
        want = settings.choice("HETPU_ENERGY").value_or("auto");  // SettingError is an invalid_argument
    }
    const std::string root = settings.text("HETPU_POWERCAP_ROOT").value_or("/sys/class/powercap");
    const std::string nvml_lib = settings.text("HETPU_NVML_LIBRARY").value_or("libnvidia-ml.so.1");
    EnergySelection sel;
    // A missing sensor is an error only when forced; otherwise the model stands in for it.
    if (want == "auto" || want == "rapl") {
        try {
            sel.sources.push_back(RaplSource::open(root));
        } catch (const std::runtime_error &e) {
            if (want == "rapl")
                throw std::runtime_error(std::string("HETPU_ENERGY=rapl: ") + e.what());
            sel.notes.push_back(e.what());
        }
    }
    if (want == "auto" || want == "nvml") {
        try {
            sel.sources.push_back(NvmlSource::open(nvml_lib));
        } catch (const std::runtime_error &e) {
            if (want == "nvml")
                throw std::runtime_error(std::string("HETPU_ENERGY=nvml: ") + e.what());
            sel.notes.push_back(e.what());
        }
    }
    // The model covers whatever no sensor does (and everything when forced).
    sel.sources.push_back(std::make_unique<ModelSource>(model, opencl_on_cpu));
    return sel;
}

}  // namespace hetpu::energy
