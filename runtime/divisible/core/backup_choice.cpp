// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/core/backup_choice.h"

#include <algorithm>

namespace hetpu {

double expected_end_s(const QueuePlanner &planner, double now_s, const BackupCandidate &b)
{
    if (b.queued_end_s >= 0)
        return b.queued_end_s;
    const double c = planner.expected_s(b.worker, b.count);
    const double ran = std::max(now_s - b.started_s, 1e-9);
    if (c < 0)
        return now_s + ran;
    if (b.started_s + c >= now_s)
        return b.started_s + c;
    return now_s + std::max(0.25 * c, ran);
}

std::vector<BackupChoice> choose_backups(const QueuePlanner &planner, double now_s,
                                         const std::vector<BackupCandidate> &started, const std::vector<int> &idle,
                                         const std::vector<BusyUnitEnd> &busy_units)
{
    std::vector<BackupChoice> chosen;
    std::vector<double> ends, later;  // later: the soonest end of a copy by a unit busy now
    for (const BackupCandidate &b : started) {
        ends.push_back(expected_end_s(planner, now_s, b));
        double soonest = -1;
        for (const BusyUnitEnd &u : busy_units) {
            const double c = u.worker == b.worker ? -1 : planner.expected_s(u.worker, b.count);
            if (c < 0)
                continue;
            const double end = std::max(u.free_s, now_s) + std::max(planner.lead_s(u.worker), 0.0) + c;
            if (soonest < 0 || end < soonest)
                soonest = end;
        }
        later.push_back(soonest);
    }
    std::vector<bool> copied(started.size(), false), busy(idle.size(), false);
    for (;;) {
        double best_gain = 0;
        size_t best_block = 0, best_unit = 0;
        for (size_t u = 0; u < idle.size(); ++u) {
            if (busy[u])
                continue;
            const double lead = planner.lead_s(idle[u]);
            for (size_t i = 0; i < started.size(); ++i) {
                if (copied[i] || started[i].worker == idle[u])
                    continue;
                const double c = planner.expected_s(idle[u], started[i].count);
                if (c < 0)
                    break;  // this unit has no measurement: it cannot promise an end
                const double end = now_s + std::max(lead, 0.0) + c;
                if (later[i] >= 0 && later[i] < end)
                    continue;  // a unit busy now would end the copy sooner: wait for it
                const double gain = ends[i] - end;
                if (gain > best_gain) {
                    best_gain = gain;
                    best_block = i;
                    best_unit = u;
                }
            }
        }
        if (best_gain <= 0)
            return chosen;
        copied[best_block] = busy[best_unit] = true;
        chosen.push_back({idle[best_unit], started[best_block].block});
    }
}

}  // namespace hetpu
