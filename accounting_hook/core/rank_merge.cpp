// SPDX-License-Identifier: LGPL-2.1-or-later
#include "accounting_hook/core/rank_merge.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "accounting_hook/core/job_json.h"

namespace hetpu::accounting {

namespace {

// "rapl+model" from the ranks' sources, each of which may itself be a join: every part once.
std::string join_sources(const std::set<std::string> &sources)
{
    std::set<std::string> parts;
    for (const std::string &s : sources)
        for (size_t start = 0; start <= s.size();) {
            const size_t plus = std::min(s.find('+', start), s.size());
            if (plus > start)
                parts.insert(s.substr(start, plus - start));
            start = plus + 1;
        }
    std::string out;
    for (const std::string &p : parts)
        out += (out.empty() ? "" : "+") + p;
    return out;
}

}  // namespace

std::string to_wire(const JobRecord &j) { return job_to_json(j).dump(); }

JobRecord from_wire(const std::string &text)
{
    try {
        return job_from_json(nlohmann::json::parse(text));
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
    out.energy_source = join_sources(sources);
    return out;
}

}  // namespace hetpu::accounting
