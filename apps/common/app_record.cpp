// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/common/app_record.h"

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
        found->busy_s += w.busy_s;
        found->transfer_s += w.transfer_s;
    }
}

std::string json_line(const AppRecord &r)
{
    JsonWriter w;
    w.begin_object()
        .field("app", r.app.c_str())
        .field("policy", r.policy.c_str())
        .field("precision", r.precision.c_str())
        .field("block", static_cast<unsigned long long>(r.block))
        .field("planner", r.planner.c_str())
        .field("rep", r.rep)
        .field("makespan_s", r.makespan_s);
    w.key("gflops");
    if (r.gflops < 0)
        w.null();
    else
        w.value(r.gflops);
    w.key("verified");
    if (r.verified == Verified::NotChecked)
        w.null();
    else
        w.value(r.verified == Verified::Passed);
    if (r.ranks > 1)
        w.field("ranks", r.ranks);
    if (r.extra)
        r.extra(w);
    w.begin_array("workers");
    for (const WorkerRecord &wr : r.workers) {
        w.begin_object()
            .field("id", wr.id)
            .field("type", wr.type.c_str())
            .field("name", wr.name.c_str())
            .field("blocks", wr.blocks)
            .field("elements", static_cast<unsigned long long>(wr.elements))
            .field("busy_s", wr.busy_s)
            .field("transfer_s", wr.transfer_s);
        if (r.ranks > 1)
            w.field("rank", wr.rank).field("host", wr.host.c_str());
        w.end_object();
    }
    w.end_array().end_object();
    return w.str();
}

}  // namespace hetpu::apps
