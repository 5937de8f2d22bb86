// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/shared_devices.h"

#include <starpu.h>
#include <unistd.h>

#include <cmath>
#include <optional>
#include <utility>

#include "accounting_hook/core/shared_device_charge.h"
#include "common/settings.h"
#include "node_arbiter/share_clock.h"
#include "node_arbiter/device_discovery.h"

namespace hetpu::accounting {

namespace {
// StarPU's initial (global) scheduling context: 0 (its STARPU_GLOBAL_SCHED_CTX is internal).
constexpr unsigned kGlobalContext = 0;
}  // namespace

std::vector<AcceleratorKey> run_accelerators(bool opencl_on_cpu)
{
    // The arbiter (opened by the scheduler inside starpu_init, before this) cleared any
    // earlier session's share already; a run under another policy must not inherit one.
    if (const auto own = mgb::own_share(); own && own->pid != int32_t(getpid()))
        mgb::remember_own_share(std::nullopt);
    std::vector<AcceleratorKey> out;
    for (const mgb::AcceleratorDevice &d : mgb::discover_accelerators(kGlobalContext)) {
        if (d.workers.empty())
            continue;
        AcceleratorKey k;
        k.key = d.key;
        const int w = d.workers.front();
        const enum starpu_worker_archtype type = starpu_worker_get_type(w);
        k.gpu = type == STARPU_CUDA_WORKER || (type == STARPU_OPENCL_WORKER && !opencl_on_cpu);
        k.devid = starpu_worker_get_devid(w);
        out.push_back(std::move(k));
    }
    return out;
}

void read_shared_device_energy(const std::vector<AcceleratorKey> &accelerators, energy::EnergySource *gpu_source)
{
    std::vector<std::pair<std::string, int>> gpus;  // arbiter key, sensor index
    for (const AcceleratorKey &a : accelerators)
        if (a.gpu && a.devid >= 0)
            gpus.emplace_back(a.key, a.devid);
    if (!gpu_source || gpus.empty() || !std::isfinite(gpu_source->gpu_counter_j(gpus.front().second))) {
        mgb::set_device_energy_reader({});
        return;
    }
    mgb::set_device_energy_reader([gpus = std::move(gpus), gpu_source](const char *key) -> std::optional<double> {
        for (const auto &[k, index] : gpus)
            if (k == key) {
                const double j = gpu_source->gpu_counter_j(index);
                return std::isfinite(j) ? std::optional<double>(j) : std::nullopt;
            }
        return std::nullopt;
    });
}

void stop_reading_shared_device_energy() { mgb::set_device_energy_reader({}); }

void apply_device_shares(RunInputs &in, const std::vector<AcceleratorKey> &accelerators,
                         energy::EnergySource *gpu_source, bool opencl_on_cpu, void (*warn)(const std::string &))
{
    stop_reading_shared_device_energy();  // the arbiter is closed: its last split is in the snapshot
    const std::optional<mgb::ShareSnapshot> own = mgb::own_share();
    mgb::remember_own_share(std::nullopt);  // charged once: a later session of this process starts afresh
    if (!own || own->pid != int32_t(getpid()) || own->devices.empty())
        return;
    const std::vector<double> per_gpu = gpu_source ? gpu_source->gpu_joules() : std::vector<double>{};
    std::vector<std::string> gpu_types = {"cuda"};
    if (!opencl_on_cpu)
        gpu_types.push_back("opencl");
    double pooled = 0;
    std::string pooled_source = gpu_source ? gpu_source->name() : "none";
    for (const WorkerTypeUsage &w : in.workers)
        if (w.worker_type == "cuda" || (w.worker_type == "opencl" && !opencl_on_cpu))
            pooled += w.energy_j;

    std::vector<SharedDevice> shared;
    for (const mgb::ShareSnapshot::Device &d : own->devices) {
        const AcceleratorKey *acc = nullptr;
        for (const AcceleratorKey &a : accelerators)
            if (a.key == d.key)
                acc = &a;
        if (!acc || !acc->gpu)
            continue;  // a CPU-side OpenCL device (PoCL) is charged as cores, not as a GPU
        SharedDevice s;
        s.key = d.key;
        s.peers = int(d.peers);
        s.time = {d.attached_s, d.share_s, d.weight_s};
        s.split = {d.joules, d.from_j, d.to_j, d.segments};
        if (s.split.segments > 0)
            s.source = gpu_source ? gpu_source->name() : "none";
        if (acc->devid >= 0 && size_t(acc->devid) < per_gpu.size()) {
            s.joules = per_gpu[size_t(acc->devid)];
            s.source = gpu_source->name();
        }
        shared.push_back(std::move(s));
    }
    if (shared.empty())
        return;
    in.devices = device_usages(shared, pooled, pooled_source, gpu_source ? gpu_source->seconds() : in.wall_s);
    move_gpu_energy_to_devices(in.workers, gpu_types, in.devices);
    try {
        in.charge_gpu_use = charge_gpu_by_use(Settings().choice("HETPU_ACCOUNTING_GPU_SHARE"), true);
    } catch (const std::exception &e) {
        warn(std::string(e.what()) + "; charging the GPU share by use");
        in.charge_gpu_use = true;
    }
}

}  // namespace hetpu::accounting
