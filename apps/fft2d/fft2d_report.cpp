// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/fft2d/fft2d_report.h"

#include <cmath>
#include <cstdio>

#include "runtime/core/json_writer.h"

namespace hetpu::fft2d {

double gflops(uint64_t m, uint64_t n, double seconds)
{
    if (seconds <= 0 || m * n == 0)
        return 0;
    const double mn = static_cast<double>(m) * static_cast<double>(n);
    return 5.0 * mn * std::log2(mn) / seconds * 1e-9;
}

std::string json_line(const RunRecord &r)
{
    JsonWriter j;
    j.begin_object()
        .field("app", "fft2d")
        .field("policy", r.policy)
        .field("precision", "double")
        .field("m", static_cast<unsigned long long>(r.m))
        .field("n", static_cast<unsigned long long>(r.n));
    j.key("k").null();
    j.field("block", static_cast<unsigned long long>(r.block))
        .field("planner", r.planner)
        .field("rep", r.rep)
        .field("makespan_s", r.makespan_s)
        .field("gflops", gflops(r.m, r.n, r.makespan_s));
    j.key("verified");
    if (r.verified == Verified::NotChecked)
        j.null();
    else
        j.value(r.verified == Verified::Passed);
    j.begin_array("workers");
    for (const WorkerRecord &w : r.workers)
        j.begin_object()
            .field("id", w.id)
            .field("type", w.type)
            .field("name", w.name)
            .field("blocks", w.blocks)
            .field("elements", static_cast<unsigned long long>(w.elements))
            .field("busy_s", w.busy_s)
            .field("transfer_s", w.transfer_s)
            .end_object();
    j.end_array().end_object();
    return j.str();
}

std::string summary(const RunRecord &r, unsigned reps)
{
    char line[512];
    std::string out;
    std::snprintf(line, sizeof line,
                  "fft2d %llu x %llu complex double, policy %s (%s), rep %u/%u: %.4f s, %.2f GFLOP/s%s\n",
                  static_cast<unsigned long long>(r.m), static_cast<unsigned long long>(r.n), r.policy.c_str(),
                  r.planner.c_str(), r.rep + 1, reps, r.makespan_s, gflops(r.m, r.n, r.makespan_s),
                  r.verified == Verified::Passed   ? ", verified"
                  : r.verified == Verified::Failed ? ", VERIFICATION FAILED"
                                                   : "");
    out += line;
    for (const WorkerRecord &w : r.workers) {
        std::snprintf(line, sizeof line, "  %-24s %4u blocks %8llu rows  busy %.4f s  transfers %.4f s\n",
                      w.name.c_str(), w.blocks, static_cast<unsigned long long>(w.elements), w.busy_s, w.transfer_s);
        out += line;
    }
    return out;
}

}  // namespace hetpu::fft2d
