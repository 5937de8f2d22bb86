// SPDX-License-Identifier: LGPL-2.1-or-later
// Command line of hetpu-heat. Pure C++: parsed and unit-tested without StarPU.
#pragma once

#include <cstdint>
#include <string>

#include "apps/common/app_options.h"
#include "apps/heat/heat_grid.h"

namespace hetpu::heat {

// Each side at most this many cells: a block (rows x cols floats) then always fits StarPU
// 1.3's 32-bit vector sizes.
constexpr uint32_t kMaxSide = 32768;

struct Options : apps::RunOptions {
    uint32_t rows = 1024, cols = 1024;  // the grid, boundary included
    uint32_t blocks = 8;                // blocks of rows, spread over the devices
    uint64_t iterations = 200;          // sweeps in all (a restarted run continues up to it)
    uint32_t checkpoint_every = 0;      // --checkpoint-every K: a checkpoint every K sweeps (0: never)
    std::string checkpoint_dir;         // --checkpoint-dir DIR: the checkpoint backend's local tier
    bool restart = false;               // --restart: continue from the newest checkpoint in DIR
    std::string output_path;            // --output FILE: the final grid, raw float32 row after row
    Geometry geometry() const { return Geometry{rows, cols, blocks}; }
};

// Returns true on success (also for --help); false with a one-line error otherwise.
bool parse_options(int argc, const char *const argv[], Options &out, std::string &error);

std::string usage(const char *prog);

}  // namespace hetpu::heat
