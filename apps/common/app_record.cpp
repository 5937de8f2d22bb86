// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/common/app_record.h"

#include <cstdio>

namespace hetpu::apps {

void accumulate_workers(std::vector<WorkerRecord> &into, const std::vector<WorkerRecord> &job)
{
    for (const WorkerRecord &w : job) {
        WorkerRecord *found = nullptr;
        for (WorkerRecord &x : into)
            if (x.id == w.id && x.rank == w.rank)
                found = &x;
        if (!found) {
            into.push_back(w);
            continue;
        }
        found->blocks += w.blocks;
        found->elements += w.elements;
        found->copies += w.copies;
        found->lost_s += w.lost_s;
        found->busy_s += w.busy_s;
        found->transfer_s += w.transfer_s;
    }
}

std::string json_line(const AppRecord &r)
{
    JsonRecord j = {{"app", r.app},         {"policy", r.policy}, {"precision", r.precision},  {"block", r.block},
                    {"planner", r.planner}, {"rep", r.rep},       {"makespan_s", r.makespan_s}};
    j["gflops"] = r.gflops < 0 ? JsonRecord() : JsonRecord(r.gflops);
    j["verified"] = r.verified == Verified::NotChecked ? JsonRecord() : JsonRecord(r.verified == Verified::Passed);
    if (r.ranks > 1)
        j["ranks"] = r.ranks;
    if (r.copies.copies > 0) {
        j["copies"] = r.copies.copies;
        j["copies_kept"] = r.copies.kept;
        j["copies_lost_s"] = r.copies.lost_s;
        j["copies_running"] = r.copies.running;
    }
    if (r.ranks > 1) {
        j["mpi_planner"] = r.mpi.planner;
        j["moves"] = r.mpi.moves;
        j["coordinator_s"] = r.mpi.coordinator_s;
        j["shares_s"] = r.mpi.shares_s;
        JsonRecord ranks = JsonRecord::array();
        for (const RankTotals &x : r.mpi.ranks)
            ranks.push_back({{"rank", x.rank},
                             {"host", x.host},
                             {"share", {x.share_offset, x.share_count}},
                             {"elements", x.elements},
                             {"data_bytes_sent", x.data_bytes_sent},
                             {"data_bytes_received", x.data_bytes_received},
                             {"control_bytes_sent", x.control_bytes_sent},
                             {"control_bytes_received", x.control_bytes_received},
                             {"app_bytes_sent", x.app_bytes_sent},
                             {"app_bytes_received", x.app_bytes_received},
                             {"max_rss_bytes", x.max_rss_bytes},
                             {"longest_silence_s", x.longest_silence_s},
                             {"link_latency_s", x.link_latency_s},
                             {"link_bytes_per_s", x.link_bytes_per_s}});
        j["rank_reports"] = std::move(ranks);
    }
    if (r.extra.is_object())
        for (const auto &[key, value] : r.extra.items())
            j[key] = value;
    JsonRecord workers = JsonRecord::array();
    for (size_t i = 0; i < r.workers.size(); ++i) {
        const WorkerRecord &w = r.workers[i];
        // StarPU's worker ids repeat across ranks: on several ranks "id" is the worker's
        // place in the job's list of PUs (rank by rank, as the planner numbers them) and
        // "local_id" StarPU's id on its rank.
        JsonRecord wj = {{"id", r.ranks > 1 ? static_cast<int>(i) : w.id},
                         {"type", w.type},
                         {"name", w.name},
                         {"blocks", w.blocks},
                         {"elements", w.elements},
                         {"busy_s", w.busy_s},
                         {"transfer_s", w.transfer_s}};
        if (r.copies.copies > 0) {
            wj["copies"] = w.copies;
            wj["lost_s"] = w.lost_s;
        }
        if (r.ranks > 1) {
            wj["rank"] = w.rank;
            wj["local_id"] = w.id;
            wj["host"] = w.host;
        }
        workers.push_back(std::move(wj));
    }
    j["workers"] = std::move(workers);
    return hetpu::json_line(j);
}

std::string worker_lines(const AppRecord &r, const char *unit)
{
    std::string out;
    char line[512];
    for (const WorkerRecord &w : r.workers) {
        // Several ranks: say whose worker it is (worker ids repeat across ranks).
        if (r.ranks > 1) {
            std::snprintf(line, sizeof line, "  rank %d (%s)", w.rank, w.host.c_str());
            out += line;
        }
        std::snprintf(line, sizeof line,
                      "  worker %2d %-6s %-28s blocks %5u  %s %10llu  busy %.6f s  transfer %.6f s\n", w.id,
                      w.type.c_str(), w.name.c_str(), w.blocks, unit, static_cast<unsigned long long>(w.elements),
                      w.busy_s, w.transfer_s);
        out += line;
    }
    return out;
}

}  // namespace hetpu::apps
