// SPDX-License-Identifier: LGPL-2.1-or-later
// What one matmul repetition produced, and its two renderings: the JSON line written to
// --json files (one object per line, read by the plotting tools) and the human summary.
// Pure C++: the StarPU glue converts hetpu's run report into a RunRecord.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/matmul/matmul_options.h"

namespace hetpu::matmul {

struct WorkerRecord {
    int id = -1;
    std::string type;  // "CPU", "OpenCL", "CUDA" or "other"
    std::string name;
    unsigned blocks = 0;
    uint64_t elements = 0;  // columns of C computed
    double busy_s = 0;
    double transfer_s = 0;
    int rank = 0;        // MPI rank of the worker (multi-rank runs)
    std::string host{};  // "{}": aggregate initialisers may leave it out without a warning
};

enum class Verified { NotChecked, Passed, Failed };

struct RunRecord {
    std::string app = "matmul";
    std::string policy;
    Precision precision = Precision::Double;
    uint64_t m = 0, n = 0, k = 0;
    uint64_t block = 0;  // fixed block size in columns, 0 when a planner chose the sizes
    std::string planner;
    unsigned rep = 0;  // 0-based repetition index
    double makespan_s = 0;
    Verified verified = Verified::NotChecked;
    std::vector<WorkerRecord> workers;
    int ranks = 1;  // > 1: an MPI run; the line then also has "ranks" and per-worker "rank", "host"
};

// 2*m*n*k / seconds, in GFLOP/s (0 when seconds <= 0).
double gflops(uint64_t m, uint64_t n, uint64_t k, double seconds);

// {"app":"matmul","policy":...,"precision":...,"m":..,"n":..,"k":..,"block":..,
//  "planner":...,"rep":i,"makespan_s":..,"gflops":..,"verified":true|false|null,
//  "workers":[{"id":..,"type":..,"name":..,"blocks":..,"elements":..,"busy_s":..,
//  "transfer_s":..}]} on one line, without the newline. Multi-rank runs add "ranks" and,
//  per worker, "rank" and "host" (single-process lines are unchanged).
std::string json_line(const RunRecord &r);

// A few lines for people: the run, then one line per worker. reps is the total number of
// repetitions (for "rep 2/5"). Ends with a newline.
std::string summary(const RunRecord &r, unsigned reps);

}  // namespace hetpu::matmul
