// SPDX-License-Identifier: LGPL-2.1-or-later
// The small region every hetpu-heat checkpoint carries beside the blocks: what grid the
// blocks belong to, so that a restart with other options is refused with the reason
// instead of continuing from a grid of another problem. Pure C++.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "apps/heat/heat_options.h"

namespace hetpu::heat {

struct CheckpointHeader {
    char magic[8] = {'h', 'e', 't', 'p', 'u', 'H', 'T', '1'};
    uint32_t rows = 0, cols = 0, blocks = 0, reserved = 0;
    uint64_t seed = 0;
    uint64_t iteration = 0;  // sweeps done when the checkpoint was taken
};

inline CheckpointHeader header_of(const Options &o, uint64_t iteration)
{
    CheckpointHeader h;
    h.rows = o.rows;
    h.cols = o.cols;
    h.blocks = o.blocks;
    h.seed = o.seed;
    h.iteration = iteration;
    return h;
}

// Whether a restored header belongs to this run's options; else the error says which
// option differs and what the checkpoint was taken with.
inline bool check_header(const CheckpointHeader &h, const Options &o, uint64_t version, std::string &error)
{
    if (std::memcmp(h.magic, CheckpointHeader().magic, sizeof h.magic) != 0) {
        error = "version " + std::to_string(version) +
                " was not written by hetpu-heat: give the --checkpoint-dir of a hetpu-heat run";
        return false;
    }
    auto differs = [&](const char *option, uint64_t theirs, uint64_t ours) {
        error = "the checkpoint was taken with " + std::string(option) + " " + std::to_string(theirs) +
                ", this run has " + std::to_string(ours) + ": restart with the same " + option;
        return false;
    };
    if (h.rows != o.rows)
        return differs("--rows", h.rows, o.rows);
    if (h.cols != o.cols)
        return differs("--cols", h.cols, o.cols);
    if (h.blocks != o.blocks)
        return differs("--blocks", h.blocks, o.blocks);
    if (h.seed != o.seed)
        return differs("--seed", h.seed, o.seed);
    if (h.iteration != version) {
        error = "version " + std::to_string(version) + " holds sweep " + std::to_string(h.iteration) +
                ": the directory was written by something else; start afresh without --restart";
        return false;
    }
    return true;
}

}  // namespace hetpu::heat
