// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu-heat's checkpoints through hetpu's checkpoint backend (include/hetpu/ckpt.h): the
// blocks' StarPU handles are protected as they are, so a checkpoint of blocks that live on
// accelerators is captured from device memory into each device's cache tier, and flushed
// to --checkpoint-dir in the background. Version number = sweeps done. StarPU glue.
#pragma once

// hetpu/ckpt.h first: it wraps StarPU 1.3's starpu_disk.h for C++ (see the header).
#include <hetpu/ckpt.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/heat/heat_checkpoint_header.h"

namespace hetpu::heat {

// The device cache's allocation unit: each block's copy takes a whole number of them.
constexpr std::size_t kCheckpointSlot = 64 << 10;

// The backend's settings for a grid: versions_to_keep 2, a host cache of a few versions, the
// local tier in `dir`, and, when device_bytes > 0 (the most bytes of the grid one device
// holds, each block rounded up to kCheckpointSlot), a device cache of two versions' worth on each accelerator.
std::string checkpoint_config(const std::string &dir, std::size_t version_bytes, std::size_t device_bytes);

class HeatCheckpoints {
public:
    explicit HeatCheckpoints(const Options &o) : options_(o) {}
    HeatCheckpoints(const HeatCheckpoints &) = delete;
    HeatCheckpoints &operator=(const HeatCheckpoints &) = delete;
    ~HeatCheckpoints();

    // Starts the backend on --checkpoint-dir and protects the header. A fresh run refuses a
    // directory that already holds heat checkpoints; a restart needs one. 0, or 1 after
    // printing why.
    // With a device tier, returns once the device caches are allocated, so that the first
    // checkpoint finds room on its devices.
    int start(std::size_t version_bytes, std::size_t device_bytes);
    // Protects every block, region "block<b>" (a fresh run; restore() does it on a restart).
    int protect(const std::vector<starpu_data_handle_t> &blocks);
    // --restart: the newest complete version, its header checked against the options, then
    // the blocks protected and restored; `iteration` = its sweeps. 0, or 1 after printing why.
    int restore(const std::vector<starpu_data_handle_t> &blocks, uint64_t &iteration);
    // The version of `iteration`, once the previous one is durable in the directory (which
    // bounds the caches to two versions); returns while the capture proceeds.
    int take(uint64_t iteration);
    // Waits for every checkpoint to reach the directory, reads the backend's counters into
    // stats, stops the backend. 0, or 1 after printing why.
    int finish(hetpu_ckpt_stats &stats);

    unsigned taken() const { return taken_; }
    bool device_tier() const { return device_tier_; }

private:
    int backend_error(const std::string &what, int rc);

    const Options &options_;
    CheckpointHeader header_;
    std::vector<std::string> regions_;
    bool started_ = false, device_tier_ = false;
    unsigned taken_ = 0;
    int64_t last_ = -1;
};

}  // namespace hetpu::heat
