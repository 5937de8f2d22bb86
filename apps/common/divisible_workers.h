// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue shared by the apps: hetpu's job report as the apps' WorkerRecords, or as a
// whole run record for an app whose repetition is one job.
#pragma once

#include <hetpu/divisible.h>
#include <hetpu/hetpu.h>

#include <vector>

#include "apps/common/app_record.h"

namespace hetpu::apps {

inline const char *worker_type_name(enum starpu_worker_archtype type)
{
    switch (type) {
    case STARPU_CPU_WORKER: return "CPU";
    case STARPU_OPENCL_WORKER: return "OpenCL";
    case STARPU_CUDA_WORKER: return "CUDA";
    default: return "other";
    }
}

inline std::vector<WorkerRecord> worker_records(const struct hetpu_divisible_report &report)
{
    std::vector<WorkerRecord> out;
    for (unsigned i = 0; i < report.nworkers; ++i) {
        const struct hetpu_worker_report &w = report.workers[i];
        out.push_back({w.workerid, worker_type_name(w.type), w.name, w.blocks, w.elements, w.busy_s, w.transfer_s,
                       w.rank, w.host});
    }
    return out;
}

// The common part of a repetition's record: the policy, the blocks, the time, the workers;
// the app adds its name and its own keys.
inline AppRecord divisible_record(const struct hetpu_divisible_report &report, unsigned rep, Verified verified)
{
    AppRecord r;
    const char *policy = hetpu_policy_name();
    r.policy = policy ? policy : "";
    r.block = report.fixed_block;
    r.planner = report.planner;
    r.rep = rep;
    r.makespan_s = report.makespan_s;
    r.verified = verified;
    r.ranks = report.ranks > 0 ? report.ranks : 1;
    r.workers = worker_records(report);
    return r;
}

}  // namespace hetpu::apps
