// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/matmul/matmul_report.h"

#include <cstdio>

namespace hetpu::matmul {

double gflops(uint64_t m, uint64_t n, uint64_t k, double seconds)
{
    if (!(seconds > 0))
        return 0;
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / seconds * 1e-9;
}

void add_problem(apps::AppRecord &r, const Options &o)
{
    r.app = "matmul";
    r.precision = precision_name(o.precision);
    r.gflops = gflops(o.m, o.n, o.k, r.makespan_s);
    r.extra = {{"m", o.m}, {"n", o.n}, {"k", o.k}, {"granule", o.granule}};
}

std::string summary(const apps::AppRecord &r, const Options &o, unsigned reps)
{
    char buf[512];
    const char *verified = r.verified == apps::Verified::NotChecked ? "not checked"
                           : r.verified == apps::Verified::Passed   ? "yes"
                                                                    : "NO (wrong result)";
    const std::string blocks =
        r.block ? "fixed blocks of " + std::to_string(r.block) + " columns" : "blocks chosen by " + r.planner;
    std::snprintf(buf, sizeof buf,
                  "matmul rep %u/%u: policy %s, %s %llux%llux%llu (m x n x k), %s\n"
                  "  makespan %.6f s, %.2f GFLOP/s, verified: %s\n",
                  r.rep + 1, reps, r.policy.c_str(), precision_name(o.precision), static_cast<unsigned long long>(o.m),
                  static_cast<unsigned long long>(o.n), static_cast<unsigned long long>(o.k), blocks.c_str(),
                  r.makespan_s, gflops(o.m, o.n, o.k, r.makespan_s), verified);
    std::string out = buf;
    if (r.ranks > 1) {
        std::snprintf(buf, sizeof buf, "  %d MPI ranks\n", r.ranks);
        out += buf;
    }
    return out + apps::worker_lines(r, "columns");
}

}  // namespace hetpu::matmul
