// SPDX-License-Identifier: LGPL-2.1-or-later
// Command line of the kmeans app. Pure C++: parsed and unit-tested without StarPU.
#pragma once

#include <cstdint>
#include <string>

#include "apps/common/app_options.h"

namespace hetpu::kmeans {

// The problem when no data is given: a few seconds at most on a two-core machine.
constexpr uint64_t kDefaultPoints = 100000;
constexpr uint32_t kDefaultK = 8;

struct Options : apps::RunOptions {
    std::string input;      // points file (CSV/TSV text or .bin); empty with --generate
    uint64_t generate = 0;  // > 0: generate this many points (Gaussian blobs)
    uint32_t dims = 2;      // --dims, generated data only
    uint32_t blobs = 0;     // --blobs, generated data only (0: k)
    double sigma = 1.0;     // --sigma, generated data only
    uint32_t k = 0;         // clusters (0: kDefaultK)
    uint32_t max_iter = 100;
    double tol = 1e-6;
    std::string centroids_path;  // --centroids FILE (CSV)
    std::string assignments_path;
    std::string write_points_path;  // --write-points FILE: save the generated points
    std::string truth_path;         // --truth FILE: save the generated centres
    uint32_t checkpoint_every = 0;  // --checkpoint-every K: checkpoint every K iterations (0: never)
    std::string checkpoint_dir;     // --checkpoint-dir DIR: the checkpoint backend's local tier
    bool restart = false;           // --restart: continue from the newest checkpoint in DIR
    uint64_t max_points_mib = 0;    // --max-points-mib: most MiB of points one process may hold (0: no limit)
};

// Returns true on success (also for --help); false with a one-line error otherwise.
// Checks that need the data (k larger than the number of points) happen after loading:
// see check_k().
bool parse_options(int argc, const char *const argv[], Options &out, std::string &error);

// k against the number of points n: "k = 12 is larger than the 10 points of FILE: ...".
bool check_k(uint32_t k, uint64_t n, const std::string &source, std::string &error);

// n x d must fit StarPU 1.3's 32-bit vector sizes.
bool check_size(uint64_t n, uint32_t d, const std::string &source, std::string &error);

std::string usage(const char *prog);

}  // namespace hetpu::kmeans
