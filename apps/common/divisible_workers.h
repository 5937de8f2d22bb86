// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue shared by the apps: hetpu's job reports as the apps' WorkerRecords, added up
// over a repetition, and as the repetition's run record.
#pragma once

#include <hetpu/divisible.h>
#include <hetpu/hetpu.h>

#include <algorithm>
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

// Adds one multi-rank job's planning and per-rank figures (rank 0's report) into a
// repetition's: counts and bytes add up, the peak memory and silence are the largest, the
// share is the first job's.
inline void add_mpi_job(MpiTotals &t, const struct hetpu_divisible_report &report)
{
    t.planner = report.mpi_planner;
    t.moves += report.moves;
    t.coordinator_s += report.coordinator_s;
    t.shares_s += report.shares_s;
    for (unsigned i = 0; i < report.nrank_reports && i < HETPU_REPORT_MAX_RANKS; ++i) {
        const hetpu_rank_report &r = report.rank_reports[i];
        RankTotals *x = nullptr;
        for (RankTotals &y : t.ranks)
            if (y.rank == r.rank)
                x = &y;
        if (!x) {
            t.ranks.push_back(RankTotals{});
            x = &t.ranks.back();
            x->rank = r.rank;
            x->host = r.host;
            x->share_offset = r.share_offset;
            x->share_count = r.share_count;
        }
        x->elements += r.elements;
        x->data_bytes_sent += r.data_bytes_sent;
        x->data_bytes_received += r.data_bytes_received;
        x->control_bytes_sent += r.control_bytes_sent;
        x->control_bytes_received += r.control_bytes_received;
        x->max_rss_bytes = std::max(x->max_rss_bytes, r.max_rss_bytes);
        x->longest_silence_s = std::max(x->longest_silence_s, r.longest_silence_s);
        if (r.link_bytes_per_s > 0) {  // measured once per process: the jobs agree
            x->link_latency_s = r.link_latency_s;
            x->link_bytes_per_s = r.link_bytes_per_s;
        }
    }
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
    if (report.ranks > 1)
        add_mpi_job(t.mpi, report);
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
    r.mpi = t.mpi;
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
