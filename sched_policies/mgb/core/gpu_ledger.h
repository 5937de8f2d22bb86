// SPDX-License-Identifier: LGPL-2.1-or-later
// The node's accelerators and every task placed on them: MGB's scheduler state
// (Chen, Porter, Pande, "Effective GPU Sharing Under Compiler Guidance", Alg. 2 and 3) and
// the two baselines the paper compares against (SA, CG).
//
// One Ledger holds up to kMaxDevices devices and kMaxGrants live placements ("grants").
// It is trivially copyable and pointer-free so that the very same object serves a single
// process (in its own memory) and all the processes of a node (in the arbiter's POSIX
// shared-memory segment, under a process-shared robust mutex). The functions below do no
// locking: the caller holds whatever lock guards the Ledger.
//
// Counters on DeviceState are derived data: ledger_rebuild_counters() recomputes them from
// the live grants, which is how the arbiter repairs a ledger whose lock holder died
// mid-update.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include <cstddef>

#include "sched_policies/mgb/core/gpu_spec.h"
#include "sched_policies/mgb/core/handle_residency.h"
#include "sched_policies/mgb/core/task_needs.h"

namespace hetpu::mgb {

constexpr unsigned kMaxDevices = 16;  // fits the 32-bit allowed-devices mask
constexpr unsigned kMaxGrants = 1024;
constexpr unsigned kMaxProcesses = 64;
constexpr unsigned kDeviceKeyLength = 64;
constexpr uint32_t kLedgerMagic = 0x4d474231;  // "MGB1"
constexpr uint32_t kLedgerVersion = 4;         // bump on any layout change
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

struct DeviceState {
    char key[kDeviceKeyLength];   // stable across processes: "cuda:0000:3b:00.0", "opencl:0:1"
    GpuSpec spec;                 // spec.memory_bytes is the capacity: the largest limit a live process reported
    uint64_t reserved_bytes;      // sum of live grants' bytes
    uint64_t in_use_warps;        // sum of live grants' warps (Alg. 3's G.InUseWarps)
    uint32_t tasks;               // live grants
    uint32_t next_sm;             // where the hardware's round robin goes on (Alg. 2's getNextSM)
    uint16_t sm_blocks[kMaxSms];  // resident blocks per SM
    uint16_t sm_warps[kMaxSms];   // resident warps per SM
    uint32_t sm_shared[kMaxSms];  // shared memory in use per SM, bytes

    uint64_t capacity() const { return spec.memory_bytes; }
    uint64_t free_bytes() const { return reserved_bytes < spec.memory_bytes ? spec.memory_bytes - reserved_bytes : 0; }
};

struct Grant {
    uint64_t id;  // 0: free slot
    int32_t pid;  // process that holds it
    uint16_t device;
    uint8_t per_sm;     // 1: sm_blocks says where Alg. 2 put the blocks
    uint8_t algorithm;  // Algorithm that made it
    uint64_t bytes;
    uint64_t warps;
    uint32_t warps_per_block;
    uint32_t shared_mem_per_block;
    uint8_t sm_blocks[kMaxSms];  // blocks placed on each SM (max_blocks_per_sm <= 255)
};

// A process using the ledger, for `hetpu mgb status`, dead-process reclaim, its own memory
// limits and node-wide aging.
struct ProcessEntry {
    int32_t pid;                           // 0: free slot
    uint32_t waiting;                      // tasks it has queued that fit nowhere yet
    uint32_t bypassed;                     // grants to other processes while it waited, since its own last grant
    char policy[16];                       // "mgb", "mgb-exact", ...
    uint64_t limit_bytes[kMaxDevices];     // its StarPU memory limit per device (0: not reported)
    uint64_t reserved_bytes[kMaxDevices];  // its live grants' bytes per device (derived)
    uint64_t in_use_warps[kMaxDevices];    // its live grants' warps per device (derived): the
                                           // accounting's share of a shared device
    // What its oldest waiting task needs on each device where memory alone keeps it waiting
    // (compute would take it now): bytes, 0 elsewhere. A checkpoint cache holding memory there
    // reads it to give back just what unblocks the task, and nothing for a wait for compute.
    uint64_t memory_wait_bytes[kMaxDevices];
};

struct Ledger {
    uint32_t magic;
    uint32_t version;
    uint32_t ndevices;
    uint32_t cg_next;  // CG's round-robin position
    uint64_t next_grant_id;
    DeviceState devices[kMaxDevices];
    Grant grants[kMaxGrants];
    ProcessEntry processes[kMaxProcesses];
};
static_assert(std::is_trivially_copyable_v<Ledger>, "the Ledger lives in shared memory");

void ledger_init(Ledger &ledger);  // empty, magic and version set

// Finds the device by key, or adds it. Returns its index, -EINVAL for an empty/too long key
// or an invalid spec, -ENOSPC when full.
//
// Processes may run under different STARPU_LIMIT_*_MEM. A registered pid's
// spec.memory_bytes is its own limit on the device: it bounds that process's grants only.
// The device's capacity is the largest limit among the live processes that reported one,
// recomputed when one detaches, so a small limit never shrinks the device for the others
// and a large one leaves with its process. Without a registered pid (a process-local
// ledger, the simulator) the capacity only grows to what is reported.
int ledger_add_device(Ledger &ledger, std::string_view key, const GpuSpec &spec, int32_t pid = 0);
int ledger_find_device(const Ledger &ledger, std::string_view key);  // -1: unknown
// The device's capacity from the live processes' limits (see ledger_add_device).
void ledger_recompute_capacity(Ledger &ledger, unsigned device);

struct PlaceRequest {
    TaskNeeds needs;
    uint32_t allowed_devices = ~0u;             // bit d set: device d may run the task
    const uint64_t *bytes_on_device = nullptr;  // [ndevices]; overrides needs.bytes per device
                                                // (data already held there by this process counts once)
    int32_t pid = 0;
    uint32_t cg_ratio = 1;  // CoreToGpu: tasks per device
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
// waits while another process has been passed over kNodeAgingLimit times (node-wide aging). A full grant table (kMaxGrants live) answers WaitForResources.
PlaceResult ledger_place(Ledger &ledger, Algorithm algorithm, const PlaceRequest &request);

// Whether device d, with nothing else on it, could hold the task (memory, within the
// requester's own limit when it reported one, and one resident block). False for an unknown device or one the request's allowed_devices excludes.
// Callers use it to refuse a task before it hangs StarPU.
bool could_ever_fit(const Ledger &ledger, int device, const PlaceRequest &request);

// Memory-only reservations (a checkpoint cache's chunks on a device). A grant of
// `bytes` on device `device` held by pid, with no compute, that is not a task (SA's "idle
// device" and CG's per-device count do not see it; Grant::algorithm is kMemoryOnly). Returns
// its id, or 0 when it does not fit the device's free memory (or pid's own limit there,
// when pid is registered with one), the device is unknown or the grant table is full.
// Released by ledger_release like any grant, and reclaimed with a dead pid's grants.
constexpr uint8_t kMemoryOnly = 0xff;
uint64_t ledger_reserve_memory(Ledger &ledger, unsigned device, int32_t pid, uint64_t bytes);

// Frees a grant's memory and compute. False: no such live grant.
bool ledger_release(Ledger &ledger, uint64_t grant);
// Adds bytes to a live grant (its device and process counters with it). False: not live.
bool ledger_grow_grant(Ledger &ledger, uint64_t grant, uint64_t bytes);
// Releases `grant` after moving the bytes of shared data it paid for to the grants of the
// tasks still using that data (HandleResidency::drop's answer), so the data stays counted on
// the device. A transfer to a grant that is gone is dropped: nothing holds the data any more.
bool ledger_release_handing_over(Ledger &ledger, uint64_t grant, const HandleTransfer *transfers, size_t count);
const Grant *ledger_find_grant(const Ledger &ledger, uint64_t grant);  // nullptr: not live

// Registers pid (idempotent) / forgets it and releases all its grants (returns how many).
// Attach returns 0, -EINVAL for pid <= 0, -ENOSPC when full.
int ledger_attach_process(Ledger &ledger, int32_t pid, std::string_view policy);
unsigned ledger_detach_process(Ledger &ledger, int32_t pid);
// memory_wait (nullptr: none) is ProcessEntry::memory_wait_bytes for its oldest waiting task,
// as ledger_memory_wait computes it; all zero once nothing waits.
void ledger_set_waiting(Ledger &ledger, int32_t pid, uint32_t waiting, const uint64_t *memory_wait = nullptr);

// For a request that waits: fills out[d] with its bytes on each allowed device where it
// would start now but for memory (free memory, or the requester's own limit), 0 elsewhere.
// SA and CG never wait for memory, so they get zeros.
void ledger_memory_wait(const Ledger &ledger, Algorithm algorithm, const PlaceRequest &request,
                        uint64_t out[kMaxDevices]);

// Bytes `releaser` must give back on `device` so that `need` bytes fit there for `waiter`
// now: 0 when they already fit; UINT64_MAX when its releases cannot make them fit (the
// waiter's own limit binds, and the releaser is another process).
uint64_t ledger_memory_lack(const Ledger &ledger, int32_t waiter, unsigned device, uint64_t need, int32_t releaser);

// Detaches every process (and every grant's pid) for which alive(pid) is false. Returns
// the grants released. Grants with pid <= 0 (no known holder) are never reclaimed.
unsigned ledger_reclaim_dead(Ledger &ledger, bool (*alive)(int32_t pid));

// Recomputes every device's counters from the live grants.
void ledger_rebuild_counters(Ledger &ledger);

}  // namespace hetpu::mgb
