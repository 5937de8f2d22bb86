// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/matmul/matmul_report.h"

#include <cstdio>
#include <limits>

#include "runtime/core/json_writer.h"

namespace hetpu::matmul {

double gflops(uint64_t m, uint64_t n, uint64_t k, double seconds)
{
    if (!(seconds > 0))
        return 0;
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / seconds * 1e-9;
}

std::string json_line(const RunRecord &r)
{
    JsonWriter w;
    w.begin_object()
        .field("app", r.app.c_str())
        .field("policy", r.policy.c_str())
        .field("precision", precision_name(r.precision))
        .field("m", static_cast<unsigned long long>(r.m))
        .field("n", static_cast<unsigned long long>(r.n))
        .field("k", static_cast<unsigned long long>(r.k))
        .field("block", static_cast<unsigned long long>(r.block))
        .field("planner", r.planner.c_str())
        .field("rep", r.rep)
        .field("makespan_s", r.makespan_s)
        .field("gflops", gflops(r.m, r.n, r.k, r.makespan_s));
    if (r.ranks > 1)
        w.field("ranks", r.ranks);
    w.key("verified");
    if (r.verified == Verified::NotChecked)
        w.null();
    else
        w.value(r.verified == Verified::Passed);
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

std::string summary(const RunRecord &r, unsigned reps)
{
    std::string out;
    char buf[512];
    const char *verified = r.verified == Verified::NotChecked ? "not checked"
                           : r.verified == Verified::Passed   ? "yes"
                                                              : "NO (wrong result)";
    std::string blocks =
        r.block ? "fixed blocks of " + std::to_string(r.block) + " columns" : "blocks chosen by " + r.planner;
    std::snprintf(buf, sizeof buf,
                  "matmul rep %u/%u: policy %s, %s %llux%llux%llu (m x n x k), %s\n"
                  "  makespan %.6f s, %.2f GFLOP/s, verified: %s\n",
                  r.rep + 1, reps, r.policy.c_str(), precision_name(r.precision), static_cast<unsigned long long>(r.m),
                  static_cast<unsigned long long>(r.n), static_cast<unsigned long long>(r.k), blocks.c_str(),
                  r.makespan_s, gflops(r.m, r.n, r.k, r.makespan_s), verified);
    out += buf;
    if (r.ranks > 1) {
        std::snprintf(buf, sizeof buf, "  %d MPI ranks\n", r.ranks);
        out += buf;
    }
    for (const WorkerRecord &wr : r.workers) {
        if (r.ranks > 1) {
            std::snprintf(buf, sizeof buf, "  rank %d (%s)", wr.rank, wr.host.c_str());
            out += buf;
        }
        std::snprintf(buf, sizeof buf,
                      "  worker %2d %-6s %-28s blocks %5u  columns %8llu  busy %.6f s  transfer %.6f s\n", wr.id,
                      wr.type.c_str(), wr.name.c_str(), wr.blocks, static_cast<unsigned long long>(wr.elements),
                      wr.busy_s, wr.transfer_s);
        out += buf;
    }
    return out;
}

}  // namespace hetpu::matmul
