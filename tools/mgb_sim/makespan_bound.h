// SPDX-License-Identifier: LGPL-2.1-or-later
// A lower bound on the makespan of a job mix on one node: no placement policy,
// however clever, finishes the batch sooner, under the simulator's co-location model
// (simulator.h). Policies are reported as multiples of it, which says how much of the
// node's throughput a packing leaves on the table without knowing the optimum.
//
// Standalone times: a job's GPU part is its kernels' standalone seconds plus the host
// seconds after each launch; its whole time adds the host work before. Both are scaled by
// the job's run-time noise factors (the simulator's, drawn from the run's seed). Jobs that
// fit no device (every memory-aware policy rejects them at once) count in no term.
//
// The bound is the largest of six terms, each a necessary condition:
//  - longest: a job's arrival plus its standalone time, the largest (nothing runs faster than
//    alone);
//  - sm: per device, the kernels placed there use at most its resident-warp capacity at
//    each instant (two co-located kernels that fill the device take twice as long, and
//    interference only slows them more). A kernel filling a share f of device d for s
//    standalone seconds uses f * s device-seconds there, at least the least such share over
//    the devices that fit its job. Time-sliced, f is 1 for every kernel: the device takes
//    turns, so it runs one kernel-second per second whatever the kernels' sizes;
//  - memory: per device, the bytes held times the time held (the GPU part at standalone
//    speed) stay within capacity * makespan;
//  - workers: each job holds a worker for its whole standalone time, and the jobs arriving at
//    r or later do so after r: r + their times / W, for every arrival time r;
//  - queue: the worker pool takes jobs in queue order (no policy reorders it), so job k
//    starts no sooner than its arrival and than the (k - W + 1)-th earliest end of the jobs
//    before it (W workers: k - W + 1 of them must have ended; job j ends no sooner than its
//    arrival plus its time), and ends its own time later. With fewer jobs than workers it
//    is the longest term;
//  - exclusive: jobs that pairwise cannot share a device (any two of them hold more memory
//    together than the largest device that fits them) run one after the other on each
//    device, the first no sooner than the least host work before their GPU parts: their GPU
//    parts over the devices. Such a set is some jobs over half that device's memory and at
//    most one below half that does not fit beside the smallest of them.
// The sm, memory and exclusive terms are taken per capacity level L (a device's capacity): the jobs
// that fit only devices of capacity >= L must share those devices alone. At the smallest
// level this is the plain bound over all devices; a job too large for a device is thus
// counted only on the devices that fit it.
#pragma once

#include <string>
#include <vector>

#include "tools/mgb_sim/scenario.h"

namespace hetpu::mgb_sim {

struct BoundTerms {
    double longest_s = 0;
    double sm_s = 0;
    double memory_s = 0;
    double workers_s = 0;
    double queue_s = 0;
    double exclusive_s = 0;
    double bound_s = 0;         // the largest of the six
    std::string binding;        // "longest", "queue", "exclusive", "sm", "memory" or "workers"
    unsigned jobs_counted = 0;  // jobs that fit some device
};

// `colocation`: how co-located kernels share a device (the run's model; the sm term depends on
// it). cpu_factor / gpu_factor: one per job (the run's noise draws); empty: all 1.
BoundTerms makespan_lower_bound(const MgbScenario &scenario, unsigned workers, Colocation colocation,
                                const std::vector<double> &cpu_factor, const std::vector<double> &gpu_factor);

}  // namespace hetpu::mgb_sim
