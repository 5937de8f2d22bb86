// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/progress_reports.h"

#include <algorithm>

#include "runtime/mpi/core/coordinator_cadence.h"
#include "runtime/mpi/core/node_shares.h"

namespace hetpu {

double node_rate(const std::vector<double> &last_rates)
{
    double sum = 0;
    for (double rate : last_rates) {
        if (rate <= 0)
            return 0;
        sum += rate;
    }
    return sum;
}

bool ProgressReports::due(WireReport &r, ReportEvent event, bool force, uint64_t handed, double elapsed_s)
{
    r.in_flight = work_left(handed - r.remaining, r.done, r.rate, elapsed_s);
    if (r.idle && !last_.idle)
        busy_s_ = elapsed_s;
    // Often enough for a slow rank's tail to be re-shared in time, rarely enough that
    // every rank's reports together stay a trickle at rank 0.
    const double period = report_period(elapsed_s, ranks_);
    const bool changed =
        r.done != last_.done || r.remaining != last_.remaining || r.idle != last_.idle || r.error != last_.error;
    if (event == kProgress && !force &&
        !(changed && (elapsed_s - last_.elapsed_s >= period || r.idle != last_.idle || r.error != last_.error)))
        return false;
    r.event = event;
    r.elapsed_s = elapsed_s;
    last_ = r;
    return true;
}

}  // namespace hetpu
