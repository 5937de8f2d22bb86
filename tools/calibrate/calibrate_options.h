// SPDX-License-Identifier: LGPL-2.1-or-later
// Command line of `hetpu calibrate`. Pure C++.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/calibrate/sample_stats.h"

namespace hetpu::calibrate {

struct Options {
    std::string app;              // matmul or fft2d
    std::vector<uint64_t> sizes;  // elements per processor, ascending, distinct
    uint64_t dim = 0;             // matmul: m = k; fft2d: row length N; 0: the app's default
    RepetitionRule rule;
    double max_seconds = 60;   // per size: stop repeating once the processors were busy this long
    std::string output;        // CSV path; "": $HETPU_HOME/profiles/<app>.csv
    double cpu_tdp_w = 100;    // the model source's figures (used when no sensor exists)
    int cores_per_socket = 0;  // 0: the machine's
    double gpu_tdp_w = 250;
    bool help = false;
};

// "64,128,256" or "FROM:TO:STEP" (inclusive), or both mixed with commas ("32:256:32,384").
// Ascending and distinct; throws std::invalid_argument naming the problem.
std::vector<uint64_t> parse_sizes(const std::string &text);

// argv without the subcommand. Throws CLI::ParseError (a ValidationError of CLI11 for what
// CLI11 cannot check itself) naming the option and the fix; --help sets Options::help.
Options parse_options(int argc, const char *const *argv);

uint64_t default_dim(const std::string &app);  // matmul 512, fft2d 1024

std::string usage();

}  // namespace hetpu::calibrate
