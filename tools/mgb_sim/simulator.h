// SPDX-License-Identifier: LGPL-2.1-or-later
// Discrete-event simulation of a batch of GPU jobs on one node under a placement policy,
// driven by the very MGB core the StarPU policies use (sched_policies/mgb/core: the Ledger's
// ledger_place / ledger_release and the WaitQueue). Nothing here re-implements Alg. 2, Alg. 3,
// SA or CG: the simulator only supplies time.
//
// Job life (the paper's worker pool, Section V-A): jobs join the queue at t = 0 or at their
// arrive_s, in queue order; each of the W workers takes the next job once it has arrived, runs its cpu_seconds of host work, then asks the policy for
// a device (the paper's task_begin) with the job's memory and the launch shape of its
// largest kernel. If none is granted the job waits in the core's WaitQueue (arrival order,
// backfilling, aging), retried whenever a job releases a device. Once granted, the job
// allocates its memory on the device and runs its kernels in sequence, each followed by its
// host_seconds (transfers, host loop: memory held, SMs free), then releases the device and
// its worker takes the next job.
//
// Crashes: a job whose allocation would take the device's allocated memory past its
// capacity fails at once (CUDA's out-of-memory error ends the process) and frees its worker.
// Only memory-blind policies (SA, CG) can be granted such a device; mgb and mgb-exact never,
// by construction of the Ledger. A job larger than every device is "rejected" by the memory-
// aware policies (NeverFits) instead of waiting forever.
//
// Co-location model. A running kernel occupies w = its resident wave in warps (the core's
// footprint_on: min(grid, one full wave) blocks times warps per block); a device holds C =
// sms * max_warps_per_sm warps. With the kernels on one device occupying W warps in all, a
// kernel progresses at
//
//     rate = min(1, C / W) / (1 + interference * min(1, (W - w) / C))
//
// standalone-seconds per second. The first factor is the hardware's block scheduler sharing
// the SMs when the device is oversubscribed (two kernels that each fill the device take
// twice as long each: no free lunch). The second is what co-located kernels cost each other
// even when their blocks all fit (shared L2, memory bandwidth, MPS time slicing of the
// front end): proportional to how much of the device the *others* occupy, at most
// `interference` (default 0.05) when they fill it. This default was set once, so that a
// device that is never oversubscribed gives slowdowns of a few percent, the order of the
// paper's Table IV (1.8% for Alg. 2, 2.5% for Alg. 3 on 4xV100); it was not fitted to the
// throughput results.
//
// That is the model of concurrent kernels (NVIDIA MPS, or one process's streams): scenario
// "colocation": "mps", the default. Without MPS, kernels of different processes do not run
// at once: the device time-slices between their contexts, and each of n co-located kernels
// progresses at 1/n whatever its size ("colocation": "time-sliced"). Packing then gains only
// by overlapping one job's host work with another's kernels. mgb and mgb-exact place by the
// same model (the core's time-sliced rule, gpu_ledger.h), each job telling them its busy share:
// its kernels' standalone seconds over those plus its host_seconds. Both are reported:
// the paper's few-percent slowdowns are in line with MPS, though it does not say whether its
// node ran it. Host work (cpu_seconds, host_seconds) never slows down: each worker is
// its own core, as in the paper's 32-core node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/mgb_sim/makespan_bound.h"
#include "tools/mgb_sim/scenario.h"

namespace hetpu::mgb_sim {

enum class Policy { Sa, Cg, Mgb, MgbExact, SchedGpu };
const char *policy_name(Policy policy);
bool parse_policy(const std::string &name, Policy &out);  // sa, cg, mgb, mgb-exact, schedgpu

struct SimOptions {
    Policy policy = Policy::Mgb;
    unsigned workers = 0;   // 0: the scenario's
    unsigned cg_ratio = 0;  // CG's jobs per device; 0: ceil(workers / devices), the paper's "cores per GPU"
    uint64_t seed = 1;
    std::optional<Colocation> colocation;  // unset: the scenario's
};

struct JobRecord {
    std::string name;
    int device = -1;        // -1: never placed
    double start_s = 0;     // taken by a worker
    double granted_s = -1;  // device granted (-1: never)
    double end_s = 0;       // finished, crashed or rejected
    double gpu_wait_s = 0;  // from asking for a device to being granted one
    bool completed = false;
    bool crashed = false;
    bool rejected = false;
    unsigned kernels = 0;            // launches run to completion
    double kernel_slowdown_pct = 0;  // mean over its launches: 100 * (elapsed / standalone - 1)
};

struct GpuRecord {
    std::string name;
    double busy_s = 0;                  // time with at least one kernel running
    uint64_t peak_allocated_bytes = 0;  // live jobs' memory (never above capacity: a job that would go past crashes)
    uint64_t peak_reserved_bytes = 0;   // what the Ledger granted (a memory-blind policy may go past capacity)
    unsigned jobs = 0;                  // jobs granted this device (crashed ones included)
    unsigned peak_jobs = 0;
};

struct SimResult {
    std::string policy;
    unsigned workers = 0;
    unsigned cg_ratio = 0;  // CG only
    uint64_t seed = 0;
    double makespan_s = 0;
    unsigned jobs = 0;
    unsigned jobs_completed = 0;
    unsigned jobs_crashed = 0;
    unsigned jobs_rejected = 0;
    double throughput_jobs_per_hour = 0;  // completed jobs / makespan
    double mean_turnaround_s = 0;         // completed jobs: end - arrive_s
    double mean_gpu_wait_s = 0;           // jobs that got a device
    double mean_kernel_slowdown_pct = 0;  // over all completed launches
    uint64_t events = 0;
    std::string colocation;    // the co-location model it ran under
    double lower_bound_s = 0;  // makespan_bound.h: no policy can finish sooner
    BoundTerms bound;
    std::vector<GpuRecord> gpus;
    std::vector<JobRecord> job_records;
};

// Each job's run-time noise factors (host work, GPU work) for a seed: what simulate uses.
void draw_job_factors(const MgbScenario &scenario, uint64_t seed, std::vector<double> &cpu, std::vector<double> &gpu);

// Deterministic: the same scenario, options and seed give the same result.
SimResult simulate(const MgbScenario &scenario, const SimOptions &options);

}  // namespace hetpu::mgb_sim
