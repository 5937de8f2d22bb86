// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/job_json.h"

#include <stdexcept>

namespace hetpu::accounting {

namespace {

nlohmann::json optional_json(const std::optional<double> &v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::optional<double> optional_from(const nlohmann::json &o, const char *key)
{
    const auto it = o.find(key);
    if (it == o.end() || it->is_null())
        return std::nullopt;
    return it->get<double>();
}

}  // namespace

nlohmann::json job_to_json(const JobRecord &j)
{
    nlohmann::json w = nlohmann::json::array();
    for (const WorkerTypeUsage &u : j.workers)
        w.push_back({{"type", u.worker_type},
                     {"workers", u.workers},
                     {"tasks", u.tasks},
                     {"busy_s", u.busy_s},
                     {"energy_j", u.energy_j},
                     {"energy_source", u.energy_source},
                     {"model_energy_j", u.model_energy_j}});
    nlohmann::json r = {{"id", j.id},
                        {"recorded_at", j.recorded_at},
                        {"started_at", j.started_at},
                        {"user", j.user},
                        {"host", j.host},
                        {"app", j.app},
                        {"policy", j.policy},
                        {"partition", j.partition},
                        {"fraction_source", j.fraction_source},
                        {"slurm_job_id", j.slurm_job_id},
                        {"nodes", j.nodes},
                        {"held", {{"cores", j.cores}, {"gpus", j.gpus}, {"memory_gib", j.mem_gib}}},
                        {"fractions", {{"cores", j.fc}, {"gpus", j.fg}, {"memory", j.fm}}},
                        {"rate", j.weight},
                        {"wall_s", j.wall_s},
                        {"su", j.su},
                        {"energy_j", j.energy_j},
                        {"energy_source", j.energy_source},
                        {"workers", w}};
    r["gco2e"] = optional_json(j.gco2e);
    r["gpu_share"] = j.gpu_share;
    r["fg_allocated"] = j.fg_allocated;
    nlohmann::json d = nlohmann::json::array();
    for (const DeviceShareUsage &u : j.devices)
        d.push_back({{"device", u.device},
                     {"peers", u.peers},
                     {"attached_h", u.attached_h},
                     {"used_share_h", u.used_share_h},
                     {"share_h", u.share_h},
                     {"fraction", u.fraction},
                     {"device_energy_j", u.device_energy_j},
                     {"energy_j", u.energy_j},
                     {"energy_source", u.energy_source},
                     {"device_from_j", optional_json(u.device_from_j)},
                     {"device_to_j", optional_json(u.device_to_j)}});
    r["devices"] = d;
    return r;
}

JobRecord job_from_json(const nlohmann::json &o)
{
    try {
        JobRecord j;
        j.id = o.value("id", 0LL);
        j.recorded_at = o.value("recorded_at", std::string());
        j.started_at = o.value("started_at", std::string());
        j.user = o.at("user");
        j.host = o.at("host");
        j.app = o.at("app");
        j.policy = o.at("policy");
        j.partition = o.at("partition");
        j.fraction_source = o.at("fraction_source");
        j.slurm_job_id = o.at("slurm_job_id");
        j.nodes = o.at("nodes");
        const nlohmann::json &held = o.at("held");
        j.cores = held.at("cores");
        j.gpus = held.at("gpus");
        j.mem_gib = held.at("memory_gib");
        const nlohmann::json &f = o.at("fractions");
        j.fc = f.at("cores");
        j.fg = f.at("gpus");
        j.fm = f.at("memory");
        j.weight = o.at("rate");
        j.wall_s = o.at("wall_s");
        j.su = o.at("su");
        j.energy_j = o.at("energy_j");
        j.energy_source = o.at("energy_source");
        j.gco2e = optional_from(o, "gco2e");
        for (const auto &w : o.at("workers"))
            j.workers.push_back({w.at("type"), w.at("workers"), w.at("tasks"), w.at("busy_s"), w.at("energy_j"),
                                 w.at("energy_source"), w.at("model_energy_j")});
        j.gpu_share = o.at("gpu_share");
        j.fg_allocated = o.at("fg_allocated");
        for (const auto &d : o.at("devices")) {
            DeviceShareUsage u;
            u.device = d.at("device");
            u.peers = d.at("peers");
            u.attached_h = d.at("attached_h");
            u.used_share_h = d.at("used_share_h");
            u.share_h = d.at("share_h");
            u.fraction = d.at("fraction");
            u.device_energy_j = d.at("device_energy_j");
            u.energy_j = d.at("energy_j");
            u.energy_source = d.at("energy_source");
            u.device_from_j = optional_from(d, "device_from_j");
            u.device_to_j = optional_from(d, "device_to_j");
            j.devices.push_back(std::move(u));
        }
        return j;
    } catch (const nlohmann::json::exception &e) {
        throw std::invalid_argument(std::string("malformed accounting record: ") + e.what());
    }
}

}  // namespace hetpu::accounting
