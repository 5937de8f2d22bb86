// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu-heat: a Jacobi sweep of the heat equation whose grid stays on the accelerators,
// checkpointed from device memory through hetpu's checkpoint backend:
//   hetpu-heat --rows 2048 --cols 2048 --iterations 500 --checkpoint-every 50 --checkpoint-dir /tmp/heat
//   hetpu-heat --rows 2048 --cols 2048 --iterations 500 --checkpoint-every 50 --checkpoint-dir /tmp/heat --restart
// hetpu/ckpt.h first: it wraps StarPU 1.3's starpu_disk.h for C++ (see the header).
#include <hetpu/ckpt.h>
#include <hetpu/hetpu.h>

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "apps/common/app_record.h"
#include "apps/common/output_file.h"
#include "apps/common/run_output.h"
#include "apps/common/run_with_starpu.h"
#include "apps/heat/heat_checkpoint.h"
#include "apps/heat/heat_codelets.h"
#include "apps/heat/heat_job.h"
#include "apps/heat/heat_options.h"

namespace {

using namespace hetpu::heat;
namespace apps = hetpu::apps;

// Tasks in flight at most: a few sweeps of every block ahead of the devices, so a long run
// never holds millions of submitted tasks.
unsigned submission_window(const Options &o) { return 2 * 4 * o.blocks; }

struct Sweeps {
    uint64_t start = 0;  // sweeps done before this process (a restart's checkpoint)
    double wall_s = 0;
    hetpu_ckpt_stats stats{};
    unsigned checkpoints = 0;
    std::vector<float> grid;
};

// Restores or starts the checkpoints, runs the sweeps, brings the grid home. 0 or 1.
int sweep(const Options &o, BlockedGrid &grid, Sweeps &s)
{
    const bool checkpointing = o.checkpoint_every > 0 || o.restart;
    HeatCheckpoints checkpoints(o);
    if (checkpointing) {
        const std::size_t version_bytes = static_cast<std::size_t>(o.rows) * o.cols * sizeof(float);
        if (checkpoints.start(version_bytes, grid.on_devices() ? grid.bytes_per_device(kCheckpointSlot) : 0) != 0)
            return 1;
        if (o.restart ? checkpoints.restore(grid.blocks(), s.start) : checkpoints.protect(grid.blocks()))
            return 1;
        if (o.restart)
            std::printf("heat: restarted from the checkpoint of sweep %" PRIu64 " in %s\n", s.start,
                        o.checkpoint_dir.c_str());
    }
    const auto t0 = std::chrono::steady_clock::now();
    int rc = grid.submit_edges();
    for (uint64_t it = s.start + 1; it <= o.iterations && rc == 0; ++it) {
        rc = grid.submit_sweep();
        if (rc == 0)
            starpu_task_wait_for_n_submitted(submission_window(o));
        // Submitted right after the sweep's tasks, without waiting for them: the capture is
        // ordered after them, and the next sweep waits only for the copy into the cache.
        if (rc == 0 && o.checkpoint_every && it % o.checkpoint_every == 0 && checkpoints.take(it) != 0)
            return 1;
    }
    if (rc != 0) {
        std::fprintf(stderr, "heat: submitting a task failed: %s\n", std::strerror(-rc));
        return 1;
    }
    starpu_task_wait_for_all();
    s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.grid = grid.gather();
    s.checkpoints = checkpoints.taken();
    return checkpoints.finish(s.stats);
}

bool write_grid(const std::string &path, const std::vector<float> &grid)
{
    std::string error;
    const std::string bytes(reinterpret_cast<const char *>(grid.data()), grid.size() * sizeof(float));
    if (apps::write_file_atomically(path, bytes, error))
        return true;
    std::fprintf(stderr, "heat: --output: %s\n", error.c_str());
    return false;
}

std::string hex(uint64_t v)
{
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
    return buf;
}

apps::AppRecord record(const Options &o, const BlockedGrid &grid, const Sweeps &s, uint64_t digest,
                       apps::Verified verified)
{
    apps::AppRecord r;
    r.app = "heat";
    const char *policy = hetpu_policy_name();
    r.policy = policy ? policy : "";
    r.precision = "float";
    r.block = block_rows(o.geometry(), 0).cells(o.cols);
    r.makespan_s = s.wall_s;
    const double cells = static_cast<double>(o.rows - 2) * (o.cols - 2);
    const uint64_t sweeps = o.iterations - s.start;
    r.gflops = s.wall_s > 0 ? 4.0 * cells * static_cast<double>(sweeps) / s.wall_s * 1e-9 : 0;
    r.verified = verified;
    for (uint32_t b = 0; b < o.blocks; ++b) {
        const int w = grid.worker_of(b);
        apps::WorkerRecord *found = nullptr;
        for (apps::WorkerRecord &x : r.workers)
            if (x.id == w)
                found = &x;
        if (!found) {
            char name[64];
            starpu_worker_get_name(w, name, sizeof name);
            const enum starpu_worker_archtype t = starpu_worker_get_type(w);
            r.workers.push_back({w,
                                 t == STARPU_CPU_WORKER      ? "CPU"
                                 : t == STARPU_OPENCL_WORKER ? "OpenCL"
                                 : t == STARPU_CUDA_WORKER   ? "CUDA"
                                                             : "other",
                                 name, 0, 0, NAN, NAN});
            found = &r.workers.back();
        }
        ++found->blocks;
        found->elements += block_rows(o.geometry(), b).cells(o.cols);
    }
    const bool checkpointing = o.checkpoint_every > 0 || o.restart;
    r.extra = {{"rows", o.rows},
               {"cols", o.cols},
               {"blocks", o.blocks},
               {"iterations", o.iterations},
               {"sweeps", sweeps},
               {"restarted_from", o.restart ? hetpu::JsonRecord(s.start) : hetpu::JsonRecord()},
               {"checkpoints", s.checkpoints},
               {"checkpoint_tier", !checkpointing      ? hetpu::JsonRecord()
                                   : grid.on_devices() ? hetpu::JsonRecord("device")
                                                       : hetpu::JsonRecord("host")},
               {"device_path_captures", s.stats.device_path_captures},
               {"host_path_captures", s.stats.host_path_captures},
               {"device_local_bytes", s.stats.device_local_bytes},
               {"device_peer_bytes", s.stats.device_peer_bytes},
               {"device_to_host_at_capture_bytes", s.stats.device_to_host_at_capture_bytes},
               {"digest", hex(digest)},
               {"wall_s", s.wall_s}};
    return r;
}

int run(const Options &o)
{
    const std::vector<int> workers = block_workers();
    if (workers.empty()) {
        std::fprintf(stderr, "heat: StarPU has no worker to run the blocks on (STARPU_NCPU=0 and no device)\n");
        return 1;
    }
    apps::RunOutput output("heat", o.json_path);
    if (!output.open())
        return 1;
    BlockedGrid grid(o.geometry(), workers);
    grid.register_data(o.seed);
    Sweeps s;
    if (sweep(o, grid, s) != 0)
        return 1;
    const uint64_t digest = grid_digest(s.grid.data(), s.grid.size());
    int status = 0;
    apps::Verified verified = apps::Verified::NotChecked;
    std::size_t differing = 0;
    if (o.verify) {
        std::vector<float> ref = initial_grid(o.seed, o.geometry());
        reference_sweeps(ref, o.geometry(), o.iterations);
        for (std::size_t i = 0; i < ref.size(); ++i)
            differing += std::memcmp(&ref[i], &s.grid[i], sizeof(float)) != 0;
        verified = differing ? apps::Verified::Failed : apps::Verified::Passed;
    }
    apps::AppRecord r = record(o, grid, s, digest, verified);
    std::printf("heat: %u x %u grid in %u blocks on %zu %s, %" PRIu64 " sweeps (%" PRIu64 " in this run) in %.3f s, "
                "%.3f GFLOP/s\n",
                o.rows, o.cols, o.blocks, workers.size(), grid.on_devices() ? "devices" : "CPU workers", o.iterations,
                o.iterations - s.start, s.wall_s, r.gflops);
    if (o.checkpoint_every || o.restart)
        std::printf("  checkpoints: %u taken into %s (%s tier): %" PRIu64
                    " blocks captured from device memory, %" PRIu64 " from main memory, %" PRIu64
                    " bytes device to host before the sweeps resumed\n",
                    s.checkpoints, o.checkpoint_dir.c_str(), grid.on_devices() ? "device" : "host",
                    s.stats.device_path_captures, s.stats.host_path_captures, s.stats.device_to_host_at_capture_bytes);
    std::printf("  digest of the final grid: %s\n", hex(digest).c_str());
    if (o.verify) {
        std::printf("  verified against the host sweep: %s (%zu cells differ)\n", differing ? "NO" : "yes", differing);
        if (differing) {
            std::fprintf(stderr, "heat: verification FAILED: %zu of %zu cells differ from the host sweep\n", differing,
                         s.grid.size());
            status = 1;
        }
    }
    std::fputs(apps::worker_lines(r, "cells").c_str(), stdout);
    output.add(apps::json_line(r));
    if (!o.output_path.empty() && !write_grid(o.output_path, s.grid))
        status = 1;
    grid.unregister();
    if (output.close() != 0)
        status = 1;
    return status;
}

}  // namespace

int main(int argc, char **argv)
{
    Options options;
    if (std::optional<int> done = apps::parse_or_exit("heat", argc, argv, options, parse_options, usage))
        return *done;
    return apps::run_with_starpu(
        "heat", codelets_init, codelets_shutdown, [&] { return run(options); }, apps::Launch::SingleProcess);
}
