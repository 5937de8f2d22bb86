// SPDX-License-Identifier: LGPL-2.1-or-later
// The references `hetpu sim` measures policies against, which no runtime could run (they
// know the machine's curves): optimum (the best static distribution, exact at granule
// resolution, noise-free), optimum-noisy (that distribution, one block per unit, run with
// the seed's noise and the slowdowns) and best-single-kind (the optimum over the one unit
// kind that finishes first alone, the others idle, run noisy as optimum-noisy).
#pragma once

#include <string>
#include <vector>

#include "tools/sim/simulator.h"

namespace hetpu::sim {

// Their names, in the order --help lists them.
const std::vector<std::string> &baseline_names();
// Their description for --help.
const char *baselines_help();

// Runs baseline `name` (one of baseline_names()); throws std::invalid_argument for a job the
// exact optimum cannot take (too many granules or units).
SimResult run_baseline(const std::string &name, const Scenario &scenario, const SimOptions &options);

}  // namespace hetpu::sim
