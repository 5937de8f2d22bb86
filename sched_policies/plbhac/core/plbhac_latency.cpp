// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_latency.h"

#include <algorithm>
#include <cmath>

#include <gsl/gsl_statistics_double.h>

#include "sched_policies/plbhac/core/plbhac_pu.h"

namespace hetpu {

double plbhac_latency_s(std::vector<double> samples)
{
    return samples.empty() ? 0.0 : gsl_stats_median(samples.data(), 1, samples.size());
}

void plbhac_note_recent(std::vector<double> &samples, double &median, double s)
{
    constexpr size_t kWindow = 16;
    samples.push_back(s);
    if (samples.size() > kWindow)
        samples.erase(samples.begin(), samples.end() - kWindow);
    median = plbhac_latency_s(samples);
}

// The latency is priced as a constant per block, not in the transfer line: it varies by
// milliseconds between blocks of nearly one size, which would give that line slopes of
// either sign. A block queued behind another hides it, and measures about none.
double plbhac_note_block_latency(PlbhacPuState &pu, const BlockDone &done)
{
    const double profiled = done.exec_s + done.transfer_s;
    double latency = 0;
    const double unseen = done.end_s - std::max(done.submitted_s, pu.last_end_s) - profiled;
    if (done.submitted_s >= 0 && std::isfinite(unseen)) {
        latency = std::max(0.0, unseen);
        pu.note_latency(latency);
    }
    return latency;
}

void plbhac_note_results_home(PlbhacPuState &pu, const BlockHome &home)
{
    if (!std::isfinite(home.home_s) || !std::isfinite(home.end_s))
        return;
    if (pu.idle_after != home.offset || !pu.outstanding.empty())
        return;
    pu.note_home_delay(std::max(0.0, home.home_s - home.end_s));
}

}  // namespace hetpu
