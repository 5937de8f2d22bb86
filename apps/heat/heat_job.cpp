// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/heat/heat_job.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "apps/heat/heat_codelets.h"

namespace hetpu::heat {

namespace {

void register_vector(starpu_data_handle_t &h, std::vector<float> &home)
{
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(home.data()), home.size(),
                                sizeof(float));
}

}  // namespace

std::vector<int> block_workers()
{
    std::vector<int> devices, cpus;
    for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
        const enum starpu_worker_archtype t = starpu_worker_get_type(static_cast<int>(w));
        bool device = false;
#ifdef HETPU_HAVE_OPENCL
        device = device || t == STARPU_OPENCL_WORKER;
#endif
#if defined(HETPU_HAVE_CUDA) && defined(STARPU_USE_CUDA)
        device = device || t == STARPU_CUDA_WORKER;
#endif
        if (device)
            devices.push_back(static_cast<int>(w));
        else if (t == STARPU_CPU_WORKER)
            cpus.push_back(static_cast<int>(w));
    }
    return devices.empty() ? cpus : devices;
}

BlockedGrid::BlockedGrid(const Geometry &g, std::vector<int> workers) : g_(g), workers_(std::move(workers)) {}

BlockedGrid::~BlockedGrid() { unregister(); }

void BlockedGrid::register_data(uint64_t seed)
{
    const std::size_t n = g_.blocks;
    home_.resize(n);
    top_home_.assign(n, std::vector<float>(g_.cols));
    bottom_home_.assign(n, std::vector<float>(g_.cols));
    blocks_.resize(n);
    top_.resize(n);
    bottom_.resize(n);
    scratch_.resize(n);
    for (uint32_t b = 0; b < n; ++b) {
        const BlockRows rows = block_rows(g_, b);
        home_[b].resize(rows.cells(g_.cols));
        initial_block(seed, g_, b, home_[b].data());
        register_vector(blocks_[b], home_[b]);
        register_vector(top_[b], top_home_[b]);
        register_vector(bottom_[b], bottom_home_[b]);
        // Scratch: no home copy; StarPU allocates it where the sweep runs.
        starpu_vector_data_register(&scratch_[b], -1, 0, rows.cells(g_.cols), sizeof(float));
    }
    outside_home_.assign(g_.cols, 0.0f);
    register_vector(outside_, outside_home_);
    registered_ = true;
}

bool BlockedGrid::on_devices() const
{
    return std::all_of(workers_.begin(), workers_.end(),
                       [](int w) { return starpu_worker_get_type(w) != STARPU_CPU_WORKER; });
}

std::size_t BlockedGrid::bytes_per_device(std::size_t unit) const
{
    std::map<unsigned, std::size_t> bytes;
    for (uint32_t b = 0; b < g_.blocks; ++b)
        bytes[starpu_worker_get_memory_node(static_cast<unsigned>(worker_of(b)))] +=
            (block_rows(g_, b).cells(g_.cols) * sizeof(float) + unit - 1) / unit * unit;
    std::size_t most = 0;
    for (const auto &[node, n] : bytes)
        most = std::max(most, n);
    return most;
}

int BlockedGrid::submit_edges()
{
    for (std::size_t b = 0; b < blocks_.size(); ++b)
        if (int rc = heat::submit_edges(blocks_[b], top_[b], bottom_[b], worker_of(b)); rc != 0)
            return rc;
    return 0;
}

int BlockedGrid::submit_sweep()
{
    const std::size_t n = blocks_.size();
    for (std::size_t b = 0; b < n; ++b) {
        const BlockRows rows = block_rows(g_, static_cast<uint32_t>(b));
        const hetpu_heat_args args{rows.first, rows.count, g_.cols, g_.rows};
        // The row above block b is block b-1's last row, the row below block b+1's first.
        starpu_data_handle_t above = b > 0 ? bottom_[b - 1] : outside_;
        starpu_data_handle_t below = b + 1 < n ? top_[b + 1] : outside_;
        if (int rc = heat::submit_sweep(blocks_[b], above, below, scratch_[b], args, worker_of(b)); rc != 0)
            return rc;
    }
    return submit_edges();
}

std::vector<float> BlockedGrid::gather() const
{
    std::vector<float> grid(static_cast<std::size_t>(g_.rows) * g_.cols);
    for (uint32_t b = 0; b < g_.blocks; ++b) {
        starpu_data_acquire(blocks_[b], STARPU_R);
        const BlockRows rows = block_rows(g_, b);
        std::memcpy(grid.data() + static_cast<std::size_t>(rows.first) * g_.cols, home_[b].data(),
                    rows.cells(g_.cols) * sizeof(float));
        starpu_data_release(blocks_[b]);
    }
    return grid;
}

void BlockedGrid::unregister()
{
    if (!registered_)
        return;
    registered_ = false;
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
        starpu_data_unregister(blocks_[b]);
        starpu_data_unregister(top_[b]);
        starpu_data_unregister(bottom_[b]);
        starpu_data_unregister(scratch_[b]);
    }
    starpu_data_unregister(outside_);
}

}  // namespace hetpu::heat
