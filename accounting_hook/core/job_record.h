// SPDX-License-Identifier: LGPL-2.1-or-later
// One charged run: what the ledger stores and `hetpu su report` reads back.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hetpu::accounting {

// Usage of one worker type (cpu, opencl, cuda) during the run.
struct WorkerTypeUsage {
    std::string worker_type;
    int workers = 0;
    long long tasks = 0;
    double busy_s = 0;
    double energy_j = 0;        // from energy_source
    std::string energy_source;  // "rapl", "nvml", "model", ...: never a bare number
    double model_energy_j = 0;  // what the model source says, for comparison with a sensor
};

// One device shared through the MGB arbiter: what this process used of it and
// what it is charged for. Share-hours are time integrals (device_share.h).
struct DeviceShareUsage {
    std::string device;          // the arbiter's key: "cuda:0000:3b:00.0", "opencl:0:1"
    int peers = 0;               // most other processes attached to it at once (0: alone)
    double attached_h = 0;       // hours attached to it
    double used_share_h = 0;     // integral of max(memory share, warp share)
    double share_h = 0;          // integral of the charged weight (use + its part of the idle rest)
    double fraction = 0;         // share_h / attached_h: the part of the device charged
    double device_energy_j = 0;  // the whole device over the interval this part covers, as measured
    double energy_j = 0;         // this process's part of it (shared_device_charge.h)
    std::string energy_source;   // "nvml", "model", ...
    // The device's energy counter at the start and end of that interval, when the part was
    // split at the counter's readings (device_share.h's ShareEnergy); absent otherwise.
    std::optional<double> device_from_j, device_to_j;
};

struct JobRecord {
    long long id = 0;         // set by the ledger
    std::string recorded_at;  // UTC, ISO 8601 ("2026-11-21T23:59:00Z"); set by the ledger if empty
    std::string started_at;   // the same form, to the second below; the ledger sets it from
                              // the wall time if empty (from recorded_at when that is given)
    std::string user, host, app, policy;
    std::string partition;
    std::string fraction_source;  // "slurm" (allocation) or "process" (workers + peak RSS)
    std::string slurm_job_id;     // "" outside Slurm
    int nodes = 1;
    double cores = 0, gpus = 0, mem_gib = 0;  // held per node
    double fc = 0, fg = 0, fm = 0;            // fractions of a node
    double weight = 0;                        // SU per node-hour of the partition
    double wall_s = 0;
    double su = 0;
    double energy_j = 0;
    std::string energy_source;    // e.g. "rapl+model"
    std::optional<double> gco2e;  // when a grid intensity is configured
    std::vector<WorkerTypeUsage> workers;
    // "use" when fg is the use-based fraction of shared devices, "allocation" when
    // it counts whole devices held (as before); fg_allocated is the latter either way.
    std::string gpu_share = "allocation";
    double fg_allocated = 0;
    std::vector<DeviceShareUsage> devices;  // empty when no device went through the arbiter
};

}  // namespace hetpu::accounting
