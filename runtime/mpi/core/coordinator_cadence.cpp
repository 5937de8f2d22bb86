// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/coordinator_cadence.h"

#include <algorithm>
#include <cmath>

namespace hetpu {

double report_period(double elapsed_s, int ranks)
{
    const double by_job = std::min(0.05, std::max(0.005, 0.02 * elapsed_s));
    return std::max(by_job, static_cast<double>(std::max(ranks, 1)) / kMaxReportsPerSecond);
}

double round_interval(double elapsed_s, int ranks) { return report_period(elapsed_s, ranks) / 4; }

double round_cost_s(size_t nodes)
{
    const double n = static_cast<double>(std::max<size_t>(nodes, 2));
    return 1e-6 + 20e-9 * n * std::log2(n);
}

}  // namespace hetpu
