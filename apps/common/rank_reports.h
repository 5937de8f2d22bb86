// SPDX-License-Identifier: LGPL-2.1-or-later
// The per-rank part of an app's JSON record on a multi-rank run: how the job was planned
// and what each rank held, moved and used (hetpu_divisible_report.rank_reports).
#pragma once

#include <hetpu/divisible.h>

#include "apps/common/app_record.h"

namespace hetpu::apps {

inline void add_rank_reports(AppRecord &record, const struct hetpu_divisible_report &report)
{
    if (report.ranks <= 1)
        return;
    if (!record.extra.is_object())
        record.extra = JsonRecord::object();
    record.extra["mpi_planner"] = report.mpi_planner;
    record.extra["moves"] = report.moves;
    record.extra["coordinator_s"] = report.coordinator_s;
    JsonRecord ranks = JsonRecord::array();
    for (unsigned i = 0; i < report.nrank_reports && i < HETPU_REPORT_MAX_RANKS; ++i) {
        const hetpu_rank_report &r = report.rank_reports[i];
        ranks.push_back({{"rank", r.rank},
                         {"host", r.host},
                         {"share", {r.share_offset, r.share_count}},
                         {"elements", r.elements},
                         {"data_bytes_sent", r.data_bytes_sent},
                         {"data_bytes_received", r.data_bytes_received},
                         {"control_bytes_sent", r.control_bytes_sent},
                         {"control_bytes_received", r.control_bytes_received},
                         {"max_rss_bytes", r.max_rss_bytes},
                         {"link_latency_s", r.link_latency_s},
                         {"link_bytes_per_s", r.link_bytes_per_s}});
    }
    record.extra["rank_reports"] = std::move(ranks);
}

}  // namespace hetpu::apps
