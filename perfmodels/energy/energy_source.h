// SPDX-License-Identifier: LGPL-2.1-or-later
// Energy sources: one interface over RAPL (powercap sysfs), NVML (dlopen) and a model
// (busy time x per-worker-type power) for machines without sensors. Pure C++, no StarPU:
// the accounting hook and `hetpu calibrate` feed busy time in and read joules out, and every
// figure they print carries the source's name.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace hetpu::energy {

// What a figure covers. OpenCL workers on PoCL run on the CPU, so their energy is CPU energy;
// callers map worker types to devices with device_of().
enum class Device { cpu, gpu };
enum class WorkerType { cpu, opencl, cuda };

const char *device_name(Device d);
const char *worker_type_name(WorkerType t);
Device device_of(WorkerType t, bool opencl_on_cpu);

// Power figures of the model source, per worker (one CPU core, one OpenCL device, one GPU).
// `active_w` is drawn while a worker runs a task, `idle_w` while it waits; dynamic energy is
// (active_w - idle_w) x busy time.
struct WorkerPower {
    double active_w = 0;
    double idle_w = 0;
};
struct PowerModel {
    WorkerPower cpu_core;  // default: cpu_tdp_w / cores_per_socket, idle 30% of it
    WorkerPower opencl;    // default: like cpu_core (PoCL) unless configured
    WorkerPower cuda;      // default: gpu_tdp_w, idle 15% of it
    const WorkerPower &of(WorkerType t) const;
    // Defaults from TDPs (watts) and cores per socket; throws std::invalid_argument on
    // non-positive figures.
    static PowerModel from_tdp(double cpu_tdp_w, int cores_per_socket, double gpu_tdp_w);
};

// A source reports cumulative joules per device since it was opened. Readings are monotone:
// counter wrap-around is folded in. A source that does not cover a device returns 0 for it
// and covers() says so.
class EnergySource {
public:
    virtual ~EnergySource() = default;
    virtual std::string name() const = 0;  // "rapl", "nvml", "model", "fake": printed with every figure
    virtual bool measured() const = 0;     // true for sensors, false for the model
    virtual bool covers(Device d) const = 0;
    virtual double joules(Device d) = 0;  // cumulative since open
    // Busy time of a worker, reported by the runtime after each task (or in bulk). Sensors
    // ignore it; the model turns it into energy. Must be cheap and thread-safe.
    virtual void add_busy(WorkerType t, double seconds) = 0;
    // How many workers of a type the run has; the model charges their idle power over the
    // whole run, as a sensor would see it. Sensors ignore it.
    virtual void set_worker_count(WorkerType t, int n)
    {
        (void)t;
        (void)n;
    }
    // Elapsed wall time since open, seconds (the model's idle energy needs it).
    virtual double seconds() const = 0;
    // Cumulative joules since open of each GPU, in the sensor's numbering (NVML's index);
    // empty when the source cannot tell GPUs apart. The accounting hook splits a shared
    // device's own joules among the processes that used it.
    virtual std::vector<double> gpu_joules() { return {}; }
    // GPU `index`'s own energy counter in joules, in the sensor's numbering: the same reading
    // in every process of the node (not since open), so processes sharing the GPU can split
    // the same segments of it. NaN when the source has no such counter for that GPU.
    virtual double gpu_counter_j(int index);
};

// Chooses sources: HETPU_ENERGY=rapl|nvml|model forces one (an unavailable sensor is an error
// naming why); unset or "auto" takes RAPL for the CPU and NVML for GPUs where they work and
// the model for whatever is left. `why` collects one line per sensor that was not usable.
struct EnergySelection {
    std::vector<std::unique_ptr<EnergySource>> sources;  // at most one per device
    std::vector<std::string> notes;
    EnergySource *for_device(Device d) const;  // nullptr if none covers it
};
// Throws std::invalid_argument for an unknown name and std::runtime_error (with the reason)
// when a forced sensor is unusable. HETPU_POWERCAP_ROOT and HETPU_NVML_LIBRARY redirect the
// sensors (tests use them). `opencl_on_cpu`: OpenCL workers are CPU devices (PoCL).
EnergySelection open_energy_sources(const PowerModel &model, const char *forced /* may be null: reads HETPU_ENERGY */,
                                    bool opencl_on_cpu = true);

// Dynamic energy of an interval: what the counter rose by minus what the device would have
// drawn idle over the same time (the paper's dynamic energy, E_total - P_static * t).
double dynamic_joules(double joules_before, double joules_after, double idle_w, double seconds);

// A sensor measures a whole device and cannot tell concurrent users apart: each user's share
// of the device's joules is its part of the device's busy time (0 when nothing was busy).
inline double busy_share(double device_joules, double busy_s, double device_busy_s)
{
    return device_busy_s > 0 ? device_joules * busy_s / device_busy_s : 0.0;
}

}  // namespace hetpu::energy
