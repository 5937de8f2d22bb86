// SPDX-License-Identifier: LGPL-2.1-or-later
// The node's accelerators and every reservation held on them: the state the node arbiter
// shares between processes. MGB's placement algorithms (sched_policies/mgb/core/gpu_ledger.h)
// decide where a task goes; this file keeps the books they and every other holder of device
// memory (the checkpoint cache) write to.
//
// One Ledger holds up to kMaxDevices devices and kMaxGrants live reservations ("grants").
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

#include "node_arbiter/core/gpu_spec.h"

namespace hetpu::mgb {

constexpr unsigned kMaxDevices = 16;  // fits the 32-bit allowed-devices mask
constexpr unsigned kMaxGrants = 1024;
constexpr unsigned kMaxProcesses = 64;
constexpr unsigned kDeviceKeyLength = 64;
constexpr uint32_t kLedgerMagic = 0x4d474231;  // "MGB1"
constexpr uint32_t kLedgerVersion = 5;         // bump on any layout change

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
    uint8_t algorithm;  // the placement algorithm that made it (mgb::Algorithm), or kMemoryOnly
    uint64_t bytes;
    uint64_t warps;
    uint32_t warps_per_block;
    uint32_t shared_mem_per_block;
    uint32_t busy_permille;      // share of its device time its kernels run, 1/1000 (1000: unknown)
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

// The registered process pid, or nullptr (pid <= 0, or not registered).
const ProcessEntry *ledger_find_process(const Ledger &ledger, int32_t pid);
ProcessEntry *ledger_find_process(Ledger &ledger, int32_t pid);
// Bytes a process may still reserve on device: the device's free memory, and within its own
// limit there when it reported one (proc nullptr: the device's free memory).
uint64_t ledger_headroom(const Ledger &ledger, const ProcessEntry *proc, unsigned device);
// A free grant slot, or nullptr when kMaxGrants are live.
Grant *ledger_free_grant_slot(Ledger &ledger);
// Makes `grant` (its id unset, its device valid) live in `slot`: gives it the next id and
// adds its bytes and compute to its device's and its process's counters. Returns the id.
uint64_t ledger_commit_grant(Ledger &ledger, Grant &slot, Grant grant);

// Memory-only reservations (a checkpoint cache's chunks on a device). A grant of `bytes` on
// device `device` held by pid, with no compute, that is not a task (SA's "idle device" and
// CG's per-device count do not see it; Grant::algorithm is kMemoryOnly). Returns its id, or
// 0 when it does not fit the device's free memory (or pid's own limit there, when pid is
// registered with one), the device is unknown or the grant table is full.
// Released by ledger_release like any grant, and reclaimed with a dead pid's grants.
constexpr uint8_t kMemoryOnly = 0xff;
uint64_t ledger_reserve_memory(Ledger &ledger, unsigned device, int32_t pid, uint64_t bytes);

// Frees a grant's memory and compute. False: no such live grant.
bool ledger_release(Ledger &ledger, uint64_t grant);
// Adds bytes to a live grant (its device and process counters with it). False: not live.
bool ledger_grow_grant(Ledger &ledger, uint64_t grant, uint64_t bytes);
const Grant *ledger_find_grant(const Ledger &ledger, uint64_t grant);  // nullptr: not live

// Registers pid (idempotent) / forgets it and releases all its grants (returns how many).
// Attach returns 0, -EINVAL for pid <= 0, -ENOSPC when full.
int ledger_attach_process(Ledger &ledger, int32_t pid, std::string_view policy);
unsigned ledger_detach_process(Ledger &ledger, int32_t pid);
// memory_wait (nullptr: none) is ProcessEntry::memory_wait_bytes for its oldest waiting task,
// as ledger_memory_wait computes it; all zero once nothing waits.
void ledger_set_waiting(Ledger &ledger, int32_t pid, uint32_t waiting, const uint64_t *memory_wait = nullptr);

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
