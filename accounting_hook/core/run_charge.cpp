// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/run_charge.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "accounting_hook/core/su_model.h"

namespace hetpu::accounting {

JobRecord charge_run(const RunInputs &in)
{
    const Partition &p = in.partition;
    validate(p);
    JobRecord j;
    j.user = in.user, j.host = in.host, j.app = in.app, j.policy = in.policy;
    j.partition = p.name;
    j.wall_s = in.wall_s;
    if (in.slurm) {
        j.fraction_source = "slurm";
        j.slurm_job_id = in.slurm->job_id;
        j.nodes = in.slurm->nodes;
        j.cores = in.slurm->cpus_per_node;
        j.gpus = in.slurm->gpus_per_node;
        j.mem_gib = in.slurm->mem_gib_per_node;
    } else {
        j.fraction_source = "process";
        j.nodes = 1;
        j.cores = in.cores_in_use;
        j.gpus = in.gpus_in_use;
        j.mem_gib = in.peak_rss_gib;
    }
    // A process cannot hold more than the node; a detected or configured node smaller than
    // what the run saw (a config describing another machine) is charged as a whole node.
    j.cores = std::min<double>(j.cores, p.cores_per_node);
    j.gpus = std::min<double>(j.gpus, p.gpus_per_node);
    j.mem_gib = std::min(j.mem_gib, p.mem_gib_per_node);
    NodeFractions f = node_fractions(p, j.cores, j.gpus, j.mem_gib);
    j.fg_allocated = f.gpus;
    j.devices = in.devices;
    if (in.charge_gpu_use && !in.slurm && !in.devices.empty() && p.gpus_per_node > 0) {
        // The GPUs held are the parts of the shared devices charged to this process (each at
        // most 1): alone on its devices that is the allocation.
        double used = 0;
        for (const DeviceShareUsage &d : in.devices)
            used += std::clamp(d.fraction, 0.0, 1.0);
        j.gpus = std::min<double>(used, p.gpus_per_node);
        f.gpus = j.gpus / p.gpus_per_node;
        j.gpu_share = "use";
    }
    j.fc = f.cores, j.fg = f.gpus, j.fm = f.memory;
    j.weight = energy_weight(p);
    j.su = cost(j.weight, j.wall_s / 3600.0, f, j.nodes);
    if (in.slurm && in.slurm->procid > 0) {
        // Every task of an srun may start StarPU; the allocation is one job, charged once,
        // by task 0. The others still record their energy.
        j.su = 0;
        j.fraction_source = "slurm task " + std::to_string(in.slurm->procid) + " (charged by task 0)";
    }
    j.workers = in.workers;
    std::set<std::string> sources;
    for (const WorkerTypeUsage &u : j.workers) {
        j.energy_j += u.energy_j;
        sources.insert(u.energy_source);
    }
    for (const std::string &s : sources)
        j.energy_source += (j.energy_source.empty() ? "" : "+") + s;
    if (j.energy_source.empty())
        j.energy_source = "none";
    if (in.grid_gco2e_per_kwh)
        j.gco2e = j.energy_j / 3.6e6 * *in.grid_gco2e_per_kwh;
    return j;
}

std::string format_joules(double j)
{
    char buf[48];
    const double a = std::fabs(j);
    if (a >= 1e6)
        std::snprintf(buf, sizeof buf, "%.3g MJ", j / 1e6);
    else if (a >= 1e3)
        std::snprintf(buf, sizeof buf, "%.3g kJ", j / 1e3);
    else if (a >= 1 || a == 0)
        std::snprintf(buf, sizeof buf, "%.3g J", j);
    else
        std::snprintf(buf, sizeof buf, "%.3g mJ", j * 1e3);
    return buf;
}

std::string format_summary(const JobRecord &j, const Partition &p, const std::string &ledger_note)
{
    std::string s;
    char line[512];
    std::snprintf(line, sizeof line, "hetpu accounting: %s (policy %s), partition '%s' [%s]\n", j.app.c_str(),
                  j.policy.c_str(), p.name.c_str(), p.origin.c_str());
    s += line;
    std::snprintf(line, sizeof line, "  node: %d cores, %.1f GiB, %d GPUs; weight %.4g SU per node-hour%s\n",
                  p.cores_per_node, p.mem_gib_per_node, p.gpus_per_node, j.weight,
                  p.has_gpus() ? " (GPU TDP / CPU TDP x C, Eq. 15)" : " (C: one SU per core-hour)");
    s += line;
    const bool slurm = j.fraction_source.rfind("slurm", 0) == 0;
    std::snprintf(
        line, sizeof line,
        "  held per node (%s): cores %g -> %.4g, GPUs %g -> %.4g, memory %.3g GiB -> %.4g (whole per-core shares)\n",
        slurm ? ("Slurm job " + j.slurm_job_id).c_str() : "StarPU workers + peak RSS", j.cores, j.fc, j.gpus, j.fg,
        j.mem_gib, j.fm);
    s += line;
    std::snprintf(line, sizeof line, "  charge: %.4g x %.6g h x %d node%s x %.4g = %.6g SU\n", j.weight,
                  j.wall_s / 3600.0, j.nodes, j.nodes == 1 ? "" : "s", std::max({j.fc, j.fg, j.fm}), j.su);
    s += line;
    for (const WorkerTypeUsage &u : j.workers) {
        std::snprintf(line, sizeof line, "  %-6s x%d: %lld tasks, busy %.3f s, energy %s [%s]", u.worker_type.c_str(),
                      u.workers, u.tasks, u.busy_s, format_joules(u.energy_j).c_str(), u.energy_source.c_str());
        s += line;
        if (u.energy_source != "model") {
            std::snprintf(line, sizeof line, " (model: %s)", format_joules(u.model_energy_j).c_str());
            s += line;
        }
        s += "\n";
    }
    std::snprintf(line, sizeof line, "  energy: %s [%s]", format_joules(j.energy_j).c_str(), j.energy_source.c_str());
    s += line;
    if (j.gco2e) {
        std::snprintf(line, sizeof line, ", %.3g gCO2e", *j.gco2e);
        s += line;
    }
    std::snprintf(line, sizeof line, "; wall %.3f s\n", j.wall_s);
    s += line;
    if (!j.devices.empty()) {
        if (j.gpu_share == "use")
            std::snprintf(line, sizeof line,
                          "  GPU fraction charged: used share of shared devices (allocated %.4g, used %.4g)\n",
                          j.fg_allocated, j.fg);
        else
            std::snprintf(line, sizeof line,
                          "  GPU fraction charged: allocation %.4g (the whole devices held; the shares below are "
                          "not charged)\n",
                          j.fg);
        s += line;
        for (const DeviceShareUsage &d : j.devices) {
            std::snprintf(line, sizeof line,
                          "  device %s: %s, share %.4g of it (busy %.4g), %.4g share-h; energy %s of %s [%s]%s\n",
                          d.device.c_str(),
                          d.peers == 0 ? "alone"
                                       : ("shared with up to " + std::to_string(d.peers) + " other(s)").c_str(),
                          d.fraction, d.attached_h > 0 ? d.used_share_h / d.attached_h : 0.0, d.share_h,
                          format_joules(d.energy_j).c_str(), format_joules(d.device_energy_j).c_str(),
                          d.energy_source.c_str(), d.peers == 0 ? "" : " (its idle time split by reservation)");
            s += line;
        }
    }
    s += "  ledger: " + ledger_note + "\n";
    return s;
}

std::string shared_devices_line(const JobRecord &j)
{
    char part[256];
    if (j.gpu_share == "use")
        std::snprintf(part, sizeof part, "GPU charged by use: fg %.4g (allocated %.4g): ", j.fg, j.fg_allocated);
    else
        std::snprintf(part, sizeof part,
                      "GPU charged by allocation: fg %.4g (the whole devices held); not charged: ", j.fg);
    std::string s = part;
    for (size_t i = 0; i < j.devices.size(); ++i) {
        const DeviceShareUsage &u = j.devices[i];
        std::snprintf(part, sizeof part, "%s%s x%.3g (%.4g share-h, %s%s)", i == 0 ? "" : "; ", u.device.c_str(),
                      u.fraction, u.share_h, format_joules(u.energy_j).c_str(),
                      u.peers > 0 ? (", shared with " + std::to_string(u.peers)).c_str() : ", alone");
        s += part;
    }
    return s;
}

}  // namespace hetpu::accounting
