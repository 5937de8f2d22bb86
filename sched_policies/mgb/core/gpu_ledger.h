// SPDX-License-Identifier: LGPL-2.1-or-later
// MGB's placement algorithms (Chen, Porter, Pande, "Effective GPU Sharing Under Compiler
// Guidance", Alg. 2 and 3) and the two baselines the paper compares against (SA, CG), over
// the node's device ledger (node_arbiter/core/device_ledger.h): the same functions place a
// single process's tasks (a Ledger in its own memory) and a node's (the arbiter's shared
// Ledger). The functions below do no locking: the caller holds whatever lock guards the
// Ledger.
#pragma once

#include <cstddef>
#include <cstdint>

#include "node_arbiter/core/device_ledger.h"
#include "node_arbiter/core/gpu_spec.h"
#include "sched_policies/mgb/core/colocation.h"
#include "sched_policies/mgb/core/handle_residency.h"
#include "sched_policies/mgb/core/task_needs.h"

namespace hetpu::mgb {

// Node-wide aging: once another process's waiting tasks have been passed over by
// this many grants to other processes, only that process may be granted a device.
constexpr uint32_t kNodeAgingLimit = 16;

enum class Algorithm : uint32_t {
    Exact = 0,         // Alg. 2: emulates the hardware's round-robin block placement; memory and compute hard
    LeastWarps = 1,    // Alg. 3 (with the erratum): memory hard, fewest in-use warps among feasible devices
    SingleAssignment,  // SA: a device runs one task at a time; the first idle device takes the next task
    CoreToGpu,         // CG: round robin, at most cg_ratio tasks per device; blind to memory (can overcommit)
};
// "mgb-exact", "mgb", "sa", "cg": the StarPU policy names.
const char *algorithm_name(Algorithm algorithm);

struct PlaceRequest {
    TaskNeeds needs;
    uint32_t allowed_devices = ~0u;             // bit d set: device d may run the task
    const uint64_t *bytes_on_device = nullptr;  // [ndevices]; overrides needs.bytes per device
                                                // (data already held there by this process counts once)
    int32_t pid = 0;
    uint32_t cg_ratio = 1;  // CoreToGpu: tasks per device
    // How the device shares time between processes (colocation.h). Under TimeSliced, mgb and
    // mgb-exact put a task beside another process's work only where it fills that work's idle
    // gaps (see ledger_place); SA and CG do not look at it.
    Colocation colocation = Colocation::Mps;
    // Time-sliced only: devices an older waiting task could run on. The task may start there
    // only on its own (no other process's work on it), never beside: filling a device's gaps
    // must not keep it from the task that has waited longer (it would wait for the gap filler
    // to end too). On its own it starts as one job per device would let it.
    uint32_t older_waiting_devices = 0;
};

enum class PlaceStatus {
    Placed,            // grant and device set; resources reserved
    WaitForResources,  // fits some allowed device once enough of its work ends
    NeverFits,         // no allowed device could hold it even when empty (waiting cannot help)
};
struct PlaceResult {
    PlaceStatus status = PlaceStatus::NeverFits;
    uint64_t grant = 0;
    int device = -1;
};

// Places the task by the algorithm, reserving its bytes and compute on the chosen device.
// Devices the task could never fit are skipped by every algorithm (as the StarPU policies
// always did); beyond that SA and CG never look at memory (as in the paper).
// A registered requester (request.pid) is also bounded by its own limit per device, and
// waits while another process has been passed over kNodeAgingLimit times (node-wide aging).
// A full grant table (kMaxGrants live) answers WaitForResources.
//
// Time-sliced co-location (request.colocation), for Exact and LeastWarps: a device's time
// load is what the other processes' live grants on it keep its kernels busy (the sum of their
// busy_permille) plus what the requester's own grants there and the task would
// (min(1000, own + task): one process's kernels share its context, so they never slice against
// each other). A device takes the task only while that load stays within 1000, i.e. the
// task's kernels fit the others' idle gaps; otherwise the task waits, as one job per device
// would. Among the devices that take it, the one with the least load wins, so free devices
// are used before any is shared (LeastWarps breaks ties by its warp share, Exact by index).
// Under Mps both algorithms are as described above their choose functions.
PlaceResult ledger_place(Ledger &ledger, Algorithm algorithm, const PlaceRequest &request);

// Whether device d, with nothing else on it, could hold the task (memory, within the
// requester's own limit when it reported one, and one resident block). False for an unknown
// device or one the request's allowed_devices excludes. Callers use it to refuse a task before it hangs StarPU.
bool could_ever_fit(const Ledger &ledger, int device, const PlaceRequest &request);

// Releases `grant` after moving the bytes of shared data it paid for to the grants of the
// tasks still using that data (HandleResidency::drop's answer), so the data stays counted on
// the device. A transfer to a grant that is gone is dropped: nothing holds the data any more.
bool ledger_release_handing_over(Ledger &ledger, uint64_t grant, const HandleTransfer *transfers, size_t count);

// For a request that waits: fills out[d] with its bytes on each allowed device where it
// would start now but for memory (free memory, or the requester's own limit), 0 elsewhere.
// SA and CG never wait for memory, so they get zeros.
void ledger_memory_wait(const Ledger &ledger, Algorithm algorithm, const PlaceRequest &request,
                        uint64_t out[kMaxDevices]);

}  // namespace hetpu::mgb
