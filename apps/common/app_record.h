// SPDX-License-Identifier: LGPL-2.1-or-later
// The run record of every app: the common JSON-line keys (app, policy, precision, block,
// planner, rep, makespan_s, gflops, verified, workers) plus each app's own fields, so that
// one reader handles the lines of all four. Pure C++ (the StarPU glue fills WorkerRecords).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json_line.h"

namespace hetpu::apps {

struct WorkerRecord {
    int id = -1;
    std::string type;  // "CPU", "OpenCL", "CUDA" or "other"
    std::string name;
    unsigned blocks = 0;
    uint64_t elements = 0;
    double busy_s = 0;
    double transfer_s = 0;
    int rank = 0;        // MPI rank of the worker (multi-rank runs)
    std::string host{};  // "{}": aggregate initialisers may leave it out without a warning
    // Backup copies handed to it, and its seconds of work thrown away (written when any
    // copy ran): blocks, elements and busy_s count only its kept tasks.
    unsigned copies{};
    double lost_s{};
};

enum class Verified { NotChecked, Passed, Failed };

// Backup copies of the app's jobs (hetpu_divisible_report), summed over a repetition.
struct CopyTotals {
    unsigned copies = 0;
    unsigned kept = 0;
    double lost_s = 0;     // seconds of work thrown away
    unsigned running = 0;  // losing copies still running when their job returned
};

// One rank of a multi-rank repetition, summed over the repetition's jobs (k-means runs one
// per pass), so that it covers what the worker figures cover. docs/cluster.md's record
// table says what each field means; a test holds the records to that table.
struct RankTotals {
    int rank = 0;
    std::string host;
    uint64_t share_offset = 0;  // the share it held in the first job
    uint64_t share_count = 0;
    uint64_t elements = 0;
    uint64_t data_bytes_sent = 0;
    uint64_t data_bytes_received = 0;
    uint64_t control_bytes_sent = 0;
    uint64_t control_bytes_received = 0;
    uint64_t max_rss_bytes = 0;   // the largest of the jobs' peaks
    uint64_t app_bytes_sent = 0;  // the app's own exchanges (hetpu_mpi_bcast, hetpu_mpi_gather)
    uint64_t app_bytes_received = 0;
    double longest_silence_s = 0;  // the longest time rank 0 heard no progress from it
    double link_latency_s = 0;     // its node's link as measured at the start (per-node)
    double link_bytes_per_s = 0;
};

// The multi-rank part of a repetition: how its jobs were planned, summed over them.
struct MpiTotals {
    std::string planner;  // "per-node" or "central"
    unsigned moves = 0;
    double coordinator_s = 0;  // deciding moves, after the start
    double shares_s = 0;       // the start-up exchange of the shares
    std::vector<RankTotals> ranks;
};

struct AppRecord {
    std::string app;
    std::string policy;
    std::string precision = "double";
    uint64_t block = 0;  // fixed block size, 0 when a planner chose the sizes
    std::string planner;
    unsigned rep = 0;
    double makespan_s = 0;  // time inside hetpu_divisible_run (summed over the app's jobs)
    double gflops = -1;     // < 0: not meaningful for this app (written as null)
    Verified verified = Verified::NotChecked;
    std::vector<WorkerRecord> workers;
    // The app's own fields, written after the common ones (an object; null: none).
    JsonRecord extra;
    int ranks = 1;      // > 1: an MPI run; the line then has "ranks" and per-worker "rank", "local_id", "host"
    CopyTotals copies;  // written ("copies", "copies_kept", "copies_lost_s", "copies_running") when any ran
    MpiTotals mpi;      // written when ranks > 1
};

// What an app's divisible jobs add up to in one repetition (grn runs one, kmeans one per
// pass): their summed time and per-worker totals, and the block rule of the last one.
struct JobTotals {
    double makespan_s = 0;
    uint64_t fixed_block = 0;  // 0: a planner chose the sizes
    std::string planner;
    std::vector<WorkerRecord> workers;
    int ranks = 1;  // MPI ranks that took part
    CopyTotals copies;
    MpiTotals mpi;
};

// Add one job's per-worker totals into a record's workers (matched by rank and id).
void accumulate_workers(std::vector<WorkerRecord> &into, const std::vector<WorkerRecord> &job);

// One JSON object on one line, without the newline. Numbers print in the shortest form
// that reads back to the same double; NaN and infinities (nothing measured) print as null.
std::string json_line(const AppRecord &r);

// One line per worker for the human summary: "  worker  0 CPU    CPU 0 ... blocks 3  <unit> 96
// busy ... s  transfer ... s", prefixed with the rank and host on a multi-rank run.
std::string worker_lines(const AppRecord &r, const char *unit);

}  // namespace hetpu::apps
