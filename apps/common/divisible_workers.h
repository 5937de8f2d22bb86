// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue shared by the apps: hetpu's job reports as the apps' WorkerRecords, added up
// over a repetition, and as the repetition's run record.
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
                       w.rank, w.host, w.copies, w.lost_s});
    }
    return out;
}

// Adds one job's report into a repetition's totals.
inline void add_job(JobTotals &t, const struct hetpu_divisible_report &report)
{
    t.makespan_s += report.makespan_s;
    t.fixed_block = report.fixed_block;
    t.planner = report.planner;
    t.ranks = report.ranks > 0 ? report.ranks : 1;
    accumulate_workers(t.workers, worker_records(report));
    t.copies.copies += report.copies;
    t.copies.kept += report.copies_kept;
    t.copies.lost_s += report.copies_lost_s;
    t.copies.running += report.copies_running;
}

// Declared after the data a job's losing backup copies may still read (the data behind the
// handles the job keeps for the whole run): going out of scope first, it waits for them to
// end (hetpu_divisible_wait_copies()) before that data goes.
struct LosingCopiesEndFirst {
    LosingCopiesEndFirst() = default;
    LosingCopiesEndFirst(const LosingCopiesEndFirst &) = delete;
    LosingCopiesEndFirst &operator=(const LosingCopiesEndFirst &) = delete;
    ~LosingCopiesEndFirst() { hetpu_divisible_wait_copies(); }
};

// The common part of a repetition's record: the policy, the blocks, the time, the workers;
// the app adds its own keys (and gflops where it counts them).
inline AppRecord record_of(const char *app, const JobTotals &t, unsigned rep, Verified verified)
{
    AppRecord r;
    r.app = app;
    const char *policy = hetpu_policy_name();
    r.policy = policy ? policy : "";
    r.block = t.fixed_block;
    r.planner = t.planner;
    r.rep = rep;
    r.makespan_s = t.makespan_s;
    r.verified = verified;
    r.ranks = t.ranks;
    r.workers = t.workers;
    r.copies = t.copies;
    return r;
}

// The record of a repetition that is one job (matmul, fft2d).
inline AppRecord record_of(const char *app, const struct hetpu_divisible_report &report, unsigned rep,
                           Verified verified)
{
    JobTotals t;
    add_job(t, report);
    return record_of(app, t, rep, verified);
}

}  // namespace hetpu::apps
