// SPDX-License-Identifier: LGPL-2.1-or-later
// The grid as StarPU data: one vector per block of rows (registered over its host copy),
// its first and last rows as two small vectors (the halos its neighbours read), and a
// scratch vector for the sweep's output. Block b's tasks all run on one worker, so its data
// stays in that device's memory from the first sweep to the end. StarPU glue.
#pragma once

#include <starpu.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "apps/heat/heat_grid.h"

namespace hetpu::heat {

// The workers the blocks go to: every OpenCL and CUDA worker with kernels in this build,
// or, without one, the CPU workers.
std::vector<int> block_workers();

class BlockedGrid {
public:
    BlockedGrid(const Geometry &g, std::vector<int> workers);
    BlockedGrid(const BlockedGrid &) = delete;
    BlockedGrid &operator=(const BlockedGrid &) = delete;
    ~BlockedGrid();

    // The initial state (heat_grid.h) registered with StarPU.
    void register_data(uint64_t seed);
    const std::vector<starpu_data_handle_t> &blocks() const { return blocks_; }
    int worker_of(std::size_t block) const { return workers_[block % workers_.size()]; }
    // Whether the blocks live on accelerators (else in main memory, on the CPU workers).
    bool on_devices() const;
    // The most bytes of the grid one memory node holds, each block rounded up to `unit`.
    std::size_t bytes_per_device(std::size_t unit) const;

    // One sweep of every block after the edges of the previous one, then the new edges.
    // 0 or a negative errno from starpu_task_submit.
    int submit_sweep();
    // The edges of the current state (before the first sweep, and after a restore).
    int submit_edges();

    // The whole grid in main memory, row after row (waits for the tasks).
    std::vector<float> gather() const;
    void unregister();

private:
    Geometry g_;
    std::vector<int> workers_;
    std::vector<std::vector<float>> home_, top_home_, bottom_home_;
    std::vector<starpu_data_handle_t> blocks_, top_, bottom_, scratch_;
    std::vector<float> outside_home_;
    starpu_data_handle_t outside_ = nullptr;  // the halo of the grid's first and last blocks (never read)
    bool registered_ = false;
};

}  // namespace hetpu::heat
