// SPDX-License-Identifier: LGPL-2.1-or-later
// What one fft2d repetition produced and its two renderings, with the same keys as matmul's
// (apps/matmul/matmul_report.h) so the same tools read both: the JSON line and the human
// summary. Pure C++.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hetpu::fft2d {

struct WorkerRecord {
    int id = -1;
    std::string type;  // "CPU", "OpenCL", "CUDA" or "other"
    std::string name;
    unsigned blocks = 0;
    uint64_t elements = 0;  // rows transformed, both phases together
    double busy_s = 0;
    double transfer_s = 0;
};

enum class Verified { NotChecked, Passed, Failed };

struct RunRecord {
    std::string policy;
    uint64_t m = 0, n = 0;
    uint64_t block = 0;  // fixed block size in rows, 0 when a planner chose the sizes
    std::string planner;
    unsigned rep = 0;
    double makespan_s = 0;  // both phases and the transpositions
    Verified verified = Verified::NotChecked;
    std::vector<WorkerRecord> workers;
};

// 5 m n log2(m n) / seconds in GFLOP/s, the customary FFT count (0 when seconds <= 0).
double gflops(uint64_t m, uint64_t n, double seconds);

// {"app":"fft2d","policy":..,"precision":"double","m":..,"n":..,"k":null,"block":..,
//  "planner":..,"rep":..,"makespan_s":..,"gflops":..,"verified":true|false|null,
//  "workers":[{"id","type","name","blocks","elements","busy_s","transfer_s"}]}: matmul's
// keys (k has no meaning here and is null).
std::string json_line(const RunRecord &r);

std::string summary(const RunRecord &r, unsigned reps);

}  // namespace hetpu::fft2d
