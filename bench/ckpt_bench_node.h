// SPDX-License-Identifier: LGPL-2.1-or-later
// What the checkpoint benchmarks over StarPU share (bench/ckpt_device, bench/ckpt_rtm_device):
// the accelerator workers whose memory is a device cache tier, waiting for those caches to be
// fully allocated, and the median. Header-only: each benchmark is one program.
#pragma once

#include "config.h"

#include <hetpu/ckpt.h>

#include <algorithm>
#include <unistd.h>
#include <vector>

// CUDA codelets exist only when StarPU has CUDA and hetpu was built with it.
#if defined(STARPU_USE_CUDA) && defined(HETPU_HAVE_CUDA)
#define HETPU_BENCH_CKPT_CUDA 1
#endif

namespace hetpu::bench {

// The OpenCL (and, in a CUDA build, CUDA) workers, in StarPU's order: one per device, each
// device its own memory node.
inline std::vector<int> accelerator_workers()
{
    std::vector<int> devices;
    for (unsigned w = 0; w < starpu_worker_get_count(); ++w) {
        const enum starpu_worker_archtype t = starpu_worker_get_type(static_cast<int>(w));
        bool accelerator = t == STARPU_OPENCL_WORKER;
#ifdef HETPU_BENCH_CKPT_CUDA
        accelerator = accelerator || t == STARPU_CUDA_WORKER;
#endif
        if (accelerator)
            devices.push_back(static_cast<int>(w));
    }
    return devices;
}

// Blocks until the device caches have all their chunks: their incremental growth is start-up
// cost, not per-checkpoint cost. Returns the stats read last.
inline hetpu_ckpt_stats wait_device_caches_grown()
{
    hetpu_ckpt_stats s{};
    do {
        hetpu_ckpt_get_stats(&s);
    } while (s.device_caches_growing && usleep(1000) == 0);
    return s;
}

// Adds the capture counters of s (how the versions were captured) into total.
inline void add_capture_stats(hetpu_ckpt_stats &total, const hetpu_ckpt_stats &s)
{
    total.device_path_captures += s.device_path_captures;
    total.host_path_captures += s.host_path_captures;
    total.device_local_bytes += s.device_local_bytes;
    total.device_peer_bytes += s.device_peer_bytes;
    total.device_to_host_at_capture_bytes += s.device_to_host_at_capture_bytes;
    total.device_capture_copy_s += s.device_capture_copy_s;
}

inline double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace hetpu::bench
