// SPDX-License-Identifier: LGPL-2.1-or-later
// Command line of the grn app. Pure C++: parsed and unit-tested without StarPU.
#pragma once

#include <cstdint>
#include <string>

#include "apps/common/app_options.h"

namespace hetpu::grn {

// Genes generated when no data is given: a few seconds at most on a two-core machine.
constexpr uint32_t kDefaultGenes = 100;

struct Options : apps::RunOptions {
    std::string input;            // genes x samples table; empty with --generate
    uint32_t generate = 0;        // > 0: this many genes from a planted network
    uint32_t samples = 60;        // --samples, generated data only
    uint32_t regulators = 0;      // --regulators, planted in-degree (0: k)
    double noise = 0.05;          // --noise, generated data only
    uint32_t k = 2;               // predictor subset cardinality, 1..3
    int lag = -1;                 // --lag; -1: 1 for generated time series, 0 for --input
    double threshold = 0.43;      // discretisation z-score threshold
    double alpha = 1.0;           // penalty mass of unseen configurations
    double max_score = 1.0;       // report targets whose best score is at most this
    std::string edges_path;       // --edges FILE (TSV)
    std::string write_data_path;  // --write-data FILE: the generated expression table
    std::string truth_path;       // --truth FILE: the planted edges
};

bool parse_options(int argc, const char *const argv[], Options &out, std::string &error);

// Checks that need the data: at least k + 1 genes, more samples than the lag.
bool check_sizes(const Options &o, uint64_t genes, uint64_t samples, const std::string &source, std::string &error);

std::string usage(const char *prog);

}  // namespace hetpu::grn
