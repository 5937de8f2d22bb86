// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/rank_merge.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace hetpu::accounting {

namespace {

std::string join_sources(const std::set<std::string> &sources)
{
    std::string out;
    for (const auto &s : sources) {
        if (s.empty())
            continue;
        // A source may already be a join ("rapl+model"): keep each part once.
        if (!out.empty())
            out += "+";
        out += s;
    }
    return out;
}

}  // namespace

std::string to_wire(const JobRecord &j)
{
    nlohmann::json o = {{"user", j.user},
                        {"host", j.host},
                        {"app", j.app},
                        {"policy", j.policy},
                        {"partition", j.partition},
                        {"fraction_source", j.fraction_source},
                        {"slurm_job_id", j.slurm_job_id},
                        {"nodes", j.nodes},
                        {"cores", j.cores},
                        {"gpus", j.gpus},
                        {"mem_gib", j.mem_gib},
                        {"fc", j.fc},
                        {"fg", j.fg},
                        {"fm", j.fm},
                        {"weight", j.weight},
                        {"wall_s", j.wall_s},
                        {"su", j.su},
                        {"energy_j", j.energy_j},
                        {"energy_source", j.energy_source}};
    o["gco2e"] = j.gco2e ? nlohmann::json(*j.gco2e) : nlohmann::json(nullptr);
    nlohmann::json ws = nlohmann::json::array();
    for (const auto &w : j.workers)
        ws.push_back({{"worker_type", w.worker_type},
                      {"workers", w.workers},
                      {"tasks", w.tasks},
                      {"busy_s", w.busy_s},
                      {"energy_j", w.energy_j},
                      {"energy_source", w.energy_source},
                      {"model_energy_j", w.model_energy_j}});
    o["workers"] = ws;
    o["gpu_share"] = j.gpu_share;
    o["fg_allocated"] = j.fg_allocated;
    nlohmann::json ds = nlohmann::json::array();
    for (const auto &d : j.devices)
        ds.push_back({{"device", d.device},
                      {"peers", d.peers},
                      {"attached_h", d.attached_h},
                      {"used_share_h", d.used_share_h},
                      {"share_h", d.share_h},
                      {"fraction", d.fraction},
                      {"device_energy_j", d.device_energy_j},
                      {"energy_j", d.energy_j},
                      {"energy_source", d.energy_source}});
    o["devices"] = ds;
    return o.dump();
}

JobRecord from_wire(const std::string &text)
{
    try {
        nlohmann::json o = nlohmann::json::parse(text);
        JobRecord j;
        j.user = o.at("user");
        j.host = o.at("host");
        j.app = o.at("app");
        j.policy = o.at("policy");
        j.partition = o.at("partition");
        j.fraction_source = o.at("fraction_source");
        j.slurm_job_id = o.at("slurm_job_id");
        j.nodes = o.at("nodes");
        j.cores = o.at("cores");
        j.gpus = o.at("gpus");
        j.mem_gib = o.at("mem_gib");
        j.fc = o.at("fc");
        j.fg = o.at("fg");
        j.fm = o.at("fm");
        j.weight = o.at("weight");
        j.wall_s = o.at("wall_s");
        j.su = o.at("su");
        j.energy_j = o.at("energy_j");
        j.energy_source = o.at("energy_source");
        if (!o.at("gco2e").is_null())
            j.gco2e = o.at("gco2e").get<double>();
        for (const auto &w : o.at("workers")) {
            WorkerTypeUsage u;
            u.worker_type = w.at("worker_type");
            u.workers = w.at("workers");
            u.tasks = w.at("tasks");
            u.busy_s = w.at("busy_s");
            u.energy_j = w.at("energy_j");
            u.energy_source = w.at("energy_source");
            u.model_energy_j = w.at("model_energy_j");
            j.workers.push_back(u);
        }
        // The shared-device fields; absent from a rank of an older hetpu.
        j.gpu_share = o.value("gpu_share", std::string("allocation"));
        j.fg_allocated = o.value("fg_allocated", j.fg);
        for (const auto &d : o.value("devices", nlohmann::json::array())) {
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
            j.devices.push_back(u);
        }
        return j;
    } catch (const nlohmann::json::exception &e) {
        throw std::invalid_argument(std::string("malformed rank accounting record: ") + e.what());
    }
}

JobRecord merge_rank_records(const std::vector<JobRecord> &ranks, int nodes)
{
    if (ranks.empty())
        throw std::invalid_argument("merge_rank_records: no rank record");
    JobRecord out = ranks.front();
    out.workers.clear();
    out.devices.clear();
    out.fg_allocated = 0;
    nodes = std::max({nodes, 1, ranks.front().slurm_job_id.empty() ? 1 : ranks.front().nodes});
    out.nodes = nodes;
    out.su = out.energy_j = out.wall_s = 0;
    out.cores = out.gpus = out.mem_gib = out.fc = out.fg = out.fm = 0;
    std::set<std::string> hosts, sources;
    bool any_gco2e = false;
    double gco2e = 0;
    for (size_t r = 0; r < ranks.size(); ++r) {
        const JobRecord &j = ranks[r];
        hosts.insert(j.host);
        sources.insert(j.energy_source);
        out.su += j.su;
        out.energy_j += j.energy_j;
        out.wall_s = std::max(out.wall_s, j.wall_s);
        if (j.gco2e) {
            any_gco2e = true;
            gco2e += *j.gco2e;
        }
        // Under Slurm, task 0 already charged the whole allocation (the others 0 SU): its
        // holdings are the allocation's, per node. Otherwise each rank held its share.
        // (task 0's source is "slurm", the others' "slurm task N (charged by task 0)")
        if (j.fraction_source.rfind("slurm", 0) == 0) {
            if (r == 0) {
                out.cores = j.cores;
                out.gpus = j.gpus;
                out.mem_gib = j.mem_gib;
                out.fc = j.fc;
                out.fg = j.fg;
                out.fm = j.fm;
            }
        } else {
            out.cores += j.cores / nodes;
            out.gpus += j.gpus / nodes;
            out.mem_gib += j.mem_gib / nodes;
            out.fc += j.fc / nodes;
            out.fg += j.fg / nodes;
            out.fm += j.fm / nodes;
            out.fg_allocated += j.fg_allocated / nodes;
        }
        if (j.gpu_share == "use")
            out.gpu_share = "use";
        // Each rank's share of the devices it used: ranks on one node may share a device.
        for (DeviceShareUsage d : j.devices) {
            d.device = "rank" + std::to_string(r) + "/" + d.device;
            out.devices.push_back(d);
        }
        for (WorkerTypeUsage w : j.workers) {
            w.worker_type = "rank" + std::to_string(r) + "/" + w.worker_type;
            out.workers.push_back(w);
        }
    }
    // Under Slurm the SU is task 0's charge of the allocation, for the job's wall time: the
    // longest rank's, as the row says (SU is linear in the time).
    const JobRecord &task0 = ranks.front();
    if (task0.fraction_source == "slurm" && task0.wall_s > 0)
        out.su = task0.su * (out.wall_s / task0.wall_s);
    if (any_gco2e)
        out.gco2e = gco2e;
    std::string host_list;
    for (const auto &h : hosts)
        host_list += (host_list.empty() ? "" : ",") + h;
    out.host = host_list;
    // Each rank's source may itself be a join: split and rejoin so every part shows once.
    std::set<std::string> parts;
    for (const auto &s : sources) {
        size_t start = 0;
        while (start <= s.size()) {
            size_t plus = s.find('+', start);
            std::string part = s.substr(start, plus == std::string::npos ? std::string::npos : plus - start);
            if (!part.empty())
                parts.insert(part);
            if (plus == std::string::npos)
                break;
            start = plus + 1;
        }
    }
    out.energy_source = join_sources(parts);
    return out;
}

}  // namespace hetpu::accounting
