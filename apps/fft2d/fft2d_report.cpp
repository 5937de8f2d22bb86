// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/fft2d/fft2d_report.h"

#include <cmath>
#include <cstdio>

namespace hetpu::fft2d {

double gflops(uint64_t m, uint64_t n, double seconds)
{
    if (seconds <= 0 || m * n == 0)
        return 0;
    const double mn = static_cast<double>(m) * static_cast<double>(n);
    return 5.0 * mn * std::log2(mn) / seconds * 1e-9;
}

void add_problem(apps::AppRecord &r, const Options &o)
{
    r.app = "fft2d";
    r.gflops = gflops(o.m, o.n, r.makespan_s);
    r.extra = {{"m", o.m}, {"n", o.n}, {"k", nullptr}, {"granule", 1}};
}

std::string summary(const apps::AppRecord &r, const Options &o, unsigned reps)
{
    char line[512];
    std::snprintf(line, sizeof line,
                  "fft2d %llu x %llu complex double, policy %s (%s), rep %u/%u: %.4f s, %.2f GFLOP/s%s\n",
                  static_cast<unsigned long long>(o.m), static_cast<unsigned long long>(o.n), r.policy.c_str(),
                  r.planner.c_str(), r.rep + 1, reps, r.makespan_s, gflops(o.m, o.n, r.makespan_s),
                  r.verified == apps::Verified::Passed   ? ", verified"
                  : r.verified == apps::Verified::Failed ? ", VERIFICATION FAILED"
                                                         : "");
    return line + apps::worker_lines(r, "rows");
}

}  // namespace hetpu::fft2d
