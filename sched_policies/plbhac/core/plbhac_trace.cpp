// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/plbhac/core/plbhac_trace.h"

#include "common/json_line.h"

namespace hetpu {

std::string plbhac_trace_json(const PlbhacTraceRecord &r)
{
    return json_line({{"policy", "plb-hac"},
                      {"time_s", r.time_s},
                      {"worker", r.worker},
                      {"worker_name", r.worker_name},
                      {"size", r.size},
                      {"predicted_s", r.predicted_s},
                      {"measured_s", r.measured_s},
                      {"phase", r.phase},
                      {"step", r.step},
                      {"latency_s", r.latency_s},
                      {"home_delay_s", r.home_delay_s},
                      {"exec_s", r.exec_s},
                      {"transfer_s", r.transfer_s},
                      {"unseen_s", r.unseen_s}});
}

}  // namespace hetpu
