// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue shared by the apps: hetpu's per-job worker report as app WorkerRecords.
#pragma once

#include <hetpu/divisible.h>

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

}  // namespace hetpu::apps
