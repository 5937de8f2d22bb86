// SPDX-License-Identifier: LGPL-2.1-or-later
// MGB's placement state and algorithms. Everything here runs under the caller's lock (a
// process-shared mutex when the Ledger is in the arbiter's segment): no allocation, no
// exceptions, bounded loops, and every mutation is a plain store into the POD Ledger.
#include "sched_policies/mgb/core/gpu_ledger.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hetpu::mgb {

namespace {

// Counters are only ever decreased by what was added to them; saturating anyway keeps a
// ledger repaired after a crash from wrapping to huge values.
template <typename T, typename U> void sat_sub(T &counter, U amount)
{
    counter = counter > T(amount) ? T(counter - T(amount)) : T(0);
}

bool allowed(const PlaceRequest &request, unsigned d) { return d < 32 && (request.allowed_devices >> d) & 1u; }

uint64_t bytes_on(const PlaceRequest &request, unsigned d)
{
    return request.bytes_on_device ? request.bytes_on_device[d] : request.needs.bytes;
}

bool key_equals(const DeviceState &dev, std::string_view key)
{
    return std::string_view(dev.key, strnlen(dev.key, kDeviceKeyLength)) == key;
}

const ProcessEntry *find_process_const(const Ledger &ledger, int32_t pid)
{
    if (pid <= 0)
        return nullptr;
    for (const ProcessEntry &p : ledger.processes)
        if (p.pid == pid)
            return &p;
    return nullptr;
}

// Bytes the requester may still reserve on device d: the device's free memory, and within
// its own limit there when it reported one.
uint64_t headroom(const Ledger &ledger, const ProcessEntry *proc, unsigned d)
{
    uint64_t room = ledger.devices[d].free_bytes();
    if (proc && proc->limit_bytes[d] > 0) {
        const uint64_t own =
            proc->limit_bytes[d] > proc->reserved_bytes[d] ? proc->limit_bytes[d] - proc->reserved_bytes[d] : 0;
        room = std::min(room, own);
    }
    return room;
}

Grant *free_grant_slot(Ledger &ledger)
{
    for (Grant &g : ledger.grants)
        if (g.id == 0)
            return &g;
    return nullptr;
}

// Can SM s of dev take one more block of fp, counting the tentative blocks of this
// placement (`placed`)? The three per-SM limits of the hardware's block scheduler.
bool sm_can_take(const DeviceState &dev, const uint8_t placed[], unsigned s, const Footprint &fp)
{
    const GpuSpec &spec = dev.spec;
    const uint64_t blocks = uint64_t(dev.sm_blocks[s]) + placed[s] + 1;
    const uint64_t warps = uint64_t(dev.sm_warps[s]) + uint64_t(placed[s] + 1) * fp.warps_per_block;
    const uint64_t shared = uint64_t(dev.sm_shared[s]) + uint64_t(placed[s] + 1) * fp.shared_mem_per_block;
    return blocks <= spec.max_blocks_per_sm && warps <= spec.max_warps_per_sm &&
           (spec.shared_mem_per_sm == 0 || shared <= spec.shared_mem_per_sm);
}

// Alg. 2's inner loop: the hardware hands blocks to SMs round robin, starting where it left
// off, skipping SMs that cannot take one more block. Fills `placed` with the blocks per SM
// and `next_sm` with where the round robin goes on; false when the blocks do not all fit
// (the tentative placement is then simply dropped: nothing was written to dev).
//
// Rather than searching from scratch for every block (O(blocks * sms) under the lock), walk
// the SMs in round-robin order in passes, dropping an SM from later passes once it refuses:
// its load only grows during one placement, so it would refuse again. The visiting order is
// exactly that of the cyclic search.
bool exact_round_robin(const DeviceState &dev, const Footprint &fp, uint8_t placed[], uint32_t &next_sm)
{
    const unsigned sms = dev.spec.sms;
    uint16_t order[kMaxSms];
    unsigned live = 0;
    for (unsigned k = 0; k < sms; ++k)
        order[live++] = uint16_t((dev.next_sm + k) % sms);
    uint32_t remaining = fp.blocks;
    while (remaining > 0 && live > 0) {
        unsigned kept = 0;
        for (unsigned k = 0; k < live && remaining > 0; ++k) {
            const unsigned s = order[k];
            if (!sm_can_take(dev, placed, s, fp))
                continue;  // full for this task: out of later passes
            ++placed[s];
            --remaining;
            next_sm = (s + 1) % sms;
            order[kept++] = uint16_t(s);
        }
        // Stopped mid-pass with blocks all placed: the rest of the order no longer matters.
        live = kept;
    }
    return remaining == 0;
}

// Alg. 2 (Exact): first fit over devices, in index order.
int choose_exact(Ledger &ledger, const PlaceRequest &request, const ProcessEntry *proc, Grant &grant)
{
    for (unsigned d = 0; d < ledger.ndevices; ++d) {
        DeviceState &dev = ledger.devices[d];
        if (!allowed(request, d) || bytes_on(request, d) > headroom(ledger, proc, d))
            continue;
        const Footprint fp = footprint_on(request.needs, dev.spec);
        if (!fp.runnable)
            continue;
        uint8_t placed[kMaxSms] = {};
        uint32_t next_sm = dev.next_sm;
        if (!exact_round_robin(dev, fp, placed, next_sm))
            continue;
        // commitSMChanges
        for (unsigned s = 0; s < dev.spec.sms; ++s) {
            if (placed[s] == 0)
                continue;
            dev.sm_blocks[s] = uint16_t(dev.sm_blocks[s] + placed[s]);
            dev.sm_warps[s] = uint16_t(dev.sm_warps[s] + placed[s] * fp.warps_per_block);
            dev.sm_shared[s] += placed[s] * fp.shared_mem_per_block;
        }
        dev.next_sm = next_sm;
        std::memcpy(grant.sm_blocks, placed, sizeof grant.sm_blocks);
        grant.per_sm = 1;
        return int(d);
    }
    return -1;
}

// Alg. 3 with the erratum (docs/design.md, "MGB Algorithm 3 least-loaded GPU"): among
// memory-feasible devices, the least loaded; strict < keeps the lowest index on ties. Compute
// is soft: in_use_warps may exceed max_warps().
//
// Load is a share of each device, not a count of warps (devices differ): the warps in use once the
// task is placed there, over the device's resident-warp capacity. Comparing absolute warps
// (the paper's G.InUseWarps) sends every job to a small GPU beside a large one, because a
// device-filling kernel occupies fewer warps on the small one. Among identical devices the
// share orders them exactly as the warp count does. Compared by cross-multiplication: no
// rounding, and the products stay below 2^64 (warps < 2^40, capacity < 2^24).
int choose_least_warps(const Ledger &ledger, const PlaceRequest &request, const ProcessEntry *proc)
{
    int best = -1;
    uint64_t best_load = 0, best_capacity = 1;
    for (unsigned d = 0; d < ledger.ndevices; ++d) {
        const DeviceState &dev = ledger.devices[d];
        if (!allowed(request, d) || bytes_on(request, d) > headroom(ledger, proc, d))
            continue;
        const Footprint fp = footprint_on(request.needs, dev.spec);
        if (!fp.runnable)
            continue;
        const uint64_t load = dev.in_use_warps + fp.warps();
        const uint64_t capacity = std::max<uint64_t>(dev.spec.max_warps(), 1);
        if (best < 0 || load * best_capacity < best_load * capacity) {
            best_load = load;
            best_capacity = capacity;
            best = int(d);
        }
    }
    return best;
}

// SA: one task per device, the first idle one. Blind to memory, as in the paper.
int choose_single_assignment(const Ledger &ledger, const PlaceRequest &request)
{
    for (unsigned d = 0; d < ledger.ndevices; ++d)
        if (allowed(request, d) && ledger.devices[d].tasks == 0)
            return int(d);
    return -1;
}

// CG: round robin over the devices, each taking up to cg_ratio tasks. Blind to memory, so
// reserved_bytes may exceed the capacity: that is the crash risk the paper measures.
int choose_core_to_gpu(Ledger &ledger, const PlaceRequest &request)
{
    const unsigned n = ledger.ndevices;
    const uint32_t ratio = std::max<uint32_t>(request.cg_ratio, 1);  // 0 would place nothing ever
    for (unsigned k = 0; k < n; ++k) {
        const unsigned d = (ledger.cg_next + k) % n;
        if (allowed(request, d) && ledger.devices[d].tasks < ratio) {
            ledger.cg_next = (d + 1) % n;
            return int(d);
        }
    }
    return -1;
}

// Why a task that was not placed was not placed (request: the devices it could ever fit).
PlaceStatus unplaced_status(const Ledger &ledger, const PlaceRequest &request)
{
    for (unsigned d = 0; d < ledger.ndevices; ++d)
        if (allowed(request, d))
            return PlaceStatus::WaitForResources;
    return PlaceStatus::NeverFits;
}

ProcessEntry *find_process(Ledger &ledger, int32_t pid)
{
    return const_cast<ProcessEntry *>(find_process_const(ledger, pid));
}

// Node-wide aging: the process whose waiting tasks were passed over most (at least
// kNodeAgingLimit times; ties: the lowest pid) is the only one that may be granted a device.
// One process at most holds that right, so two starved processes never block each other.
const ProcessEntry *starved_process(const Ledger &ledger)
{
    const ProcessEntry *starved = nullptr;
    for (const ProcessEntry &p : ledger.processes)
        if (p.pid > 0 && p.waiting > 0 && p.bypassed >= kNodeAgingLimit &&
            (!starved || p.bypassed > starved->bypassed || (p.bypassed == starved->bypassed && p.pid < starved->pid)))
            starved = &p;
    return starved;
}

void add_grant_to_device(Ledger &ledger, DeviceState &dev, const Grant &g)
{
    dev.reserved_bytes += g.bytes;
    dev.in_use_warps += g.warps;
    if (g.algorithm != kMemoryOnly)
        ++dev.tasks;
    if (ProcessEntry *p = find_process(ledger, g.pid); p && g.device < kMaxDevices) {
        p->reserved_bytes[g.device] += g.bytes;
        p->in_use_warps[g.device] += g.warps;
    }
}

void add_grant_per_sm(DeviceState &dev, const Grant &g)
{
    for (unsigned s = 0; s < std::min<unsigned>(dev.spec.sms, kMaxSms); ++s) {
        dev.sm_blocks[s] = uint16_t(dev.sm_blocks[s] + g.sm_blocks[s]);
        dev.sm_warps[s] = uint16_t(dev.sm_warps[s] + g.sm_blocks[s] * g.warps_per_block);
        dev.sm_shared[s] += g.sm_blocks[s] * g.shared_mem_per_block;
    }
}

void remove_grant_from_device(Ledger &ledger, DeviceState &dev, const Grant &g)
{
    if (ProcessEntry *p = find_process(ledger, g.pid); p && g.device < kMaxDevices) {
        sat_sub(p->reserved_bytes[g.device], g.bytes);
        sat_sub(p->in_use_warps[g.device], g.warps);
    }
    sat_sub(dev.reserved_bytes, g.bytes);
    sat_sub(dev.in_use_warps, g.warps);
    if (g.algorithm != kMemoryOnly)
        sat_sub(dev.tasks, 1u);
    if (!g.per_sm)
        return;
    for (unsigned s = 0; s < std::min<unsigned>(dev.spec.sms, kMaxSms); ++s) {
        sat_sub(dev.sm_blocks[s], g.sm_blocks[s]);
        sat_sub(dev.sm_warps[s], uint64_t(g.sm_blocks[s]) * g.warps_per_block);
        sat_sub(dev.sm_shared[s], uint64_t(g.sm_blocks[s]) * g.shared_mem_per_block);
    }
}

Grant *find_live_grant(Ledger &ledger, uint64_t id)
{
    if (id == 0)
        return nullptr;
    for (Grant &g : ledger.grants)
        if (g.id == id)
            return &g;
    return nullptr;
}

void free_grant(Ledger &ledger, Grant &g)
{
    if (g.device < ledger.ndevices)
        remove_grant_from_device(ledger, ledger.devices[g.device], g);
    std::memset(&g, 0, sizeof g);
}

unsigned release_grants_of(Ledger &ledger, int32_t pid)
{
    unsigned n = 0;
    for (Grant &g : ledger.grants)
        if (g.id != 0 && g.pid == pid) {
            free_grant(ledger, g);
            ++n;
        }
    return n;
}

}  // namespace

const char *algorithm_name(Algorithm algorithm)
{
    switch (algorithm) {
    case Algorithm::Exact: return "mgb-exact";
    case Algorithm::LeastWarps: return "mgb";
    case Algorithm::SingleAssignment: return "sa";
    case Algorithm::CoreToGpu: return "cg";
    }
    return "unknown";
}

void ledger_init(Ledger &ledger)
{
    // The Ledger is a POD of fixed size (~0.4 MB): clear it in place, no temporary.
    std::memset(static_cast<void *>(&ledger), 0, sizeof ledger);
    ledger.magic = kLedgerMagic;
    ledger.version = kLedgerVersion;
    ledger.next_grant_id = 1;  // 0 marks a free grant slot
}

int ledger_find_device(const Ledger &ledger, std::string_view key)
{
    for (unsigned d = 0; d < std::min<unsigned>(ledger.ndevices, kMaxDevices); ++d)
        if (key_equals(ledger.devices[d], key))
            return int(d);
    return -1;
}

int ledger_add_device(Ledger &ledger, std::string_view key, const GpuSpec &spec, int32_t pid)
{
    if (key.empty() || key.size() >= kDeviceKeyLength)
        return -EINVAL;
    try {
        check_spec(spec);
    } catch (const std::invalid_argument &) {
        return -EINVAL;  // the shared ledger holds only devices that can run work
    }
    int d = ledger_find_device(ledger, key);
    if (d < 0) {
        if (ledger.ndevices >= kMaxDevices)
            return -ENOSPC;
        DeviceState &dev = ledger.devices[ledger.ndevices];
        std::memset(static_cast<void *>(&dev), 0, sizeof dev);
        std::memcpy(dev.key, key.data(), key.size());
        dev.spec = spec;                                 // the hardware's figures: the first report stays
        dev.spec.name[sizeof dev.spec.name - 1] = '\0';  // printed by other processes
        d = int(ledger.ndevices++);
    }
    if (ProcessEntry *p = find_process(ledger, pid)) {
        p->limit_bytes[d] = spec.memory_bytes;
        ledger_recompute_capacity(ledger, unsigned(d));
    } else {
        GpuSpec &have = ledger.devices[d].spec;
        have.memory_bytes = std::max(have.memory_bytes, spec.memory_bytes);
    }
    return d;
}

void ledger_recompute_capacity(Ledger &ledger, unsigned device)
{
    if (device >= std::min<unsigned>(ledger.ndevices, kMaxDevices))
        return;
    uint64_t largest = 0;
    for (const ProcessEntry &p : ledger.processes)
        if (p.pid > 0)
            largest = std::max(largest, p.limit_bytes[device]);
    if (largest > 0)  // nobody reporting keeps the last capacity: the device is still there
        ledger.devices[device].spec.memory_bytes = largest;
}

bool could_ever_fit(const Ledger &ledger, int device, const PlaceRequest &request)
{
    if (device < 0 || unsigned(device) >= ledger.ndevices || !allowed(request, unsigned(device)))
        return false;
    const DeviceState &dev = ledger.devices[device];
    const uint64_t bytes = bytes_on(request, unsigned(device));
    const ProcessEntry *proc = find_process_const(ledger, request.pid);
    if (proc && proc->limit_bytes[device] > 0 && bytes > proc->limit_bytes[device])
        return false;
    // Alg. 2 needs no extra test: a footprint is at most one resident wave, which by
    // construction fits an empty device's SMs.
    return bytes <= dev.capacity() && footprint_on(request.needs, dev.spec).runnable;
}

PlaceResult ledger_place(Ledger &ledger, Algorithm algorithm, const PlaceRequest &asked)
{
    // Devices that could never hold the task are out for every algorithm, SA and CG
    // included: the StarPU policies drop them before placing (a job larger than a V100 is
    // never sent to one while an A100 could take it), and the simulator goes through here
    // too, so both place alike.
    PlaceRequest request = asked;
    for (unsigned d = 0; d < std::min<unsigned>(ledger.ndevices, 32); ++d)
        if (!could_ever_fit(ledger, int(d), asked))
            request.allowed_devices &= ~(1u << d);
    PlaceResult result;
    result.status = unplaced_status(ledger, request);
    if (result.status == PlaceStatus::NeverFits)
        return result;
    ProcessEntry *proc = find_process(ledger, request.pid);
    if (proc) {
        const ProcessEntry *starved = starved_process(ledger);
        if (starved && starved != proc)
            return result;  // another process has waited long enough: it goes first
    }
    // A full grant table is a transient shortage like any other: tasks end and free slots.
    Grant *slot = free_grant_slot(ledger);
    if (!slot)
        return result;

    Grant grant;
    std::memset(static_cast<void *>(&grant), 0, sizeof grant);
    int d = -1;
    switch (algorithm) {
    case Algorithm::Exact: d = choose_exact(ledger, request, proc, grant); break;
    case Algorithm::LeastWarps: d = choose_least_warps(ledger, request, proc); break;
    case Algorithm::SingleAssignment: d = choose_single_assignment(ledger, request); break;
    case Algorithm::CoreToGpu: d = choose_core_to_gpu(ledger, request); break;
    }
    if (d < 0)
        return result;

    DeviceState &dev = ledger.devices[d];
    const Footprint fp = footprint_on(request.needs, dev.spec);
    grant.pid = request.pid;
    grant.device = uint16_t(d);
    grant.algorithm = uint8_t(algorithm);
    grant.bytes = bytes_on(request, unsigned(d));
    grant.warps = fp.warps();
    grant.warps_per_block = fp.warps_per_block;
    grant.shared_mem_per_block = fp.shared_mem_per_block;
    // The id last, after the counter moved on: a holder dying here leaves at worst a skipped
    // id and a free slot, never two grants with one id.
    const uint64_t id = ledger.next_grant_id++;
    add_grant_to_device(ledger, dev, grant);
    grant.id = id;
    *slot = grant;
    if (proc) {
        // Its own grant ends its wait's count; every other waiting process was passed over.
        proc->bypassed = 0;
        for (ProcessEntry &p : ledger.processes)
            if (p.pid > 0 && &p != proc && p.waiting > 0)
                ++p.bypassed;
    }

    result.status = PlaceStatus::Placed;
    result.grant = id;
    result.device = d;
    return result;
}

uint64_t ledger_reserve_memory(Ledger &ledger, unsigned device, int32_t pid, uint64_t bytes)
{
    if (device >= ledger.ndevices || bytes == 0)
        return 0;
    if (headroom(ledger, find_process_const(ledger, pid), device) < bytes)
        return 0;
    Grant *slot = free_grant_slot(ledger);
    if (!slot)
        return 0;
    Grant grant;
    std::memset(static_cast<void *>(&grant), 0, sizeof grant);
    grant.pid = pid;
    grant.device = uint16_t(device);
    grant.algorithm = kMemoryOnly;
    grant.bytes = bytes;
    // The id last, as in ledger_place.
    const uint64_t id = ledger.next_grant_id++;
    add_grant_to_device(ledger, ledger.devices[device], grant);
    grant.id = id;
    *slot = grant;
    return id;
}

bool ledger_release(Ledger &ledger, uint64_t grant)
{
    Grant *g = find_live_grant(ledger, grant);
    if (!g)
        return false;
    free_grant(ledger, *g);
    return true;
}

bool ledger_grow_grant(Ledger &ledger, uint64_t grant, uint64_t bytes)
{
    Grant *g = find_live_grant(ledger, grant);
    if (!g || g->device >= ledger.ndevices)
        return false;
    g->bytes += bytes;
    ledger.devices[g->device].reserved_bytes += bytes;
    if (ProcessEntry *p = find_process(ledger, g->pid))
        p->reserved_bytes[g->device] += bytes;
    return true;
}

bool ledger_release_handing_over(Ledger &ledger, uint64_t grant, const HandleTransfer *transfers, size_t count)
{
    const Grant *g = find_live_grant(ledger, grant);
    if (!g)
        return false;
    for (size_t i = 0; i < count; ++i) {
        const Grant *to = find_live_grant(ledger, transfers[i].to_grant);
        if (to && to->device == g->device)  // the same device's data, never another's
            ledger_grow_grant(ledger, transfers[i].to_grant, transfers[i].bytes);
    }
    return ledger_release(ledger, grant);
}

const Grant *ledger_find_grant(const Ledger &ledger, uint64_t grant)
{
    return find_live_grant(const_cast<Ledger &>(ledger), grant);
}

int ledger_attach_process(Ledger &ledger, int32_t pid, std::string_view policy)
{
    if (pid <= 0)
        return -EINVAL;  // 0 marks a free slot
    if (find_process(ledger, pid))
        return 0;
    for (ProcessEntry &p : ledger.processes) {
        if (p.pid != 0)
            continue;
        std::memset(&p, 0, sizeof p);
        std::memcpy(p.policy, policy.data(), std::min(policy.size(), sizeof p.policy - 1));
        p.pid = pid;
        return 0;
    }
    return -ENOSPC;
}

unsigned ledger_detach_process(Ledger &ledger, int32_t pid)
{
    if (pid == 0)
        return 0;  // would match every free grant slot's pid
    const unsigned released = release_grants_of(ledger, pid);
    if (ProcessEntry *p = find_process(ledger, pid)) {
        std::memset(p, 0, sizeof *p);
        // Its limit leaves with it: the device is again what the others reported.
        for (unsigned d = 0; d < std::min<unsigned>(ledger.ndevices, kMaxDevices); ++d)
            ledger_recompute_capacity(ledger, d);
    }
    return released;
}

void ledger_set_waiting(Ledger &ledger, int32_t pid, uint32_t waiting, const uint64_t *memory_wait)
{
    if (ProcessEntry *p = find_process(ledger, pid)) {
        p->waiting = waiting;
        if (waiting == 0)
            p->bypassed = 0;  // nothing of it waits: nothing to age
        if (memory_wait && waiting > 0)
            std::memcpy(p->memory_wait_bytes, memory_wait, sizeof p->memory_wait_bytes);
        else
            std::memset(p->memory_wait_bytes, 0, sizeof p->memory_wait_bytes);
    }
}

void ledger_memory_wait(const Ledger &ledger, Algorithm algorithm, const PlaceRequest &request,
                        uint64_t out[kMaxDevices])
{
    std::fill(out, out + kMaxDevices, uint64_t(0));
    if (algorithm != Algorithm::Exact && algorithm != Algorithm::LeastWarps)
        return;  // blind to memory: their tasks wait for a device's compute only
    const ProcessEntry *proc = find_process_const(ledger, request.pid);
    for (unsigned d = 0; d < std::min<unsigned>(ledger.ndevices, kMaxDevices); ++d) {
        if (!allowed(request, d) || !could_ever_fit(ledger, int(d), request))
            continue;
        const DeviceState &dev = ledger.devices[d];
        const Footprint fp = footprint_on(request.needs, dev.spec);
        if (!fp.runnable || bytes_on(request, d) <= headroom(ledger, proc, d))
            continue;                         // memory is not what it lacks here
        if (algorithm == Algorithm::Exact) {  // compute is hard: it must fit the SMs now
            uint8_t placed[kMaxSms] = {};
            uint32_t next_sm = dev.next_sm;
            if (!exact_round_robin(dev, fp, placed, next_sm))
                continue;
        }
        out[d] = bytes_on(request, d);
    }
}

uint64_t ledger_memory_lack(const Ledger &ledger, int32_t waiter, unsigned device, uint64_t need, int32_t releaser)
{
    if (device >= std::min<unsigned>(ledger.ndevices, kMaxDevices))
        return UINT64_MAX;
    const ProcessEntry *proc = find_process_const(ledger, waiter);
    const uint64_t device_free = ledger.devices[device].free_bytes();
    uint64_t own = UINT64_MAX;  // what the waiter's own limit leaves it there
    if (proc && proc->limit_bytes[device] > 0)
        own = proc->limit_bytes[device] > proc->reserved_bytes[device]
                  ? proc->limit_bytes[device] - proc->reserved_bytes[device]
                  : 0;
    if (need <= std::min(device_free, own))
        return 0;
    if (waiter == releaser)  // its own releases raise both the device's free memory and its own room
        return need - std::min(device_free, own);
    return own < need ? UINT64_MAX : need - device_free;
}

unsigned ledger_reclaim_dead(Ledger &ledger, bool (*alive)(int32_t pid))
{
    // Returns the grants released. Registered processes first, then grants whose holder
    // never registered (or whose entry was lost): both die with their process. A grant
    // with pid <= 0 has no known holder (a single-process ledger need not set it) and is
    // never taken for dead: kill(0, 0) would ask about our own process group.
    unsigned released = 0;
    for (ProcessEntry &p : ledger.processes)
        if (p.pid > 0 && !alive(p.pid))
            released += ledger_detach_process(ledger, p.pid);
    for (Grant &g : ledger.grants)
        if (g.id != 0 && g.pid > 0 && !alive(g.pid)) {
            free_grant(ledger, g);
            ++released;
        }
    return released;
}

void ledger_rebuild_counters(Ledger &ledger)
{
    ledger.ndevices = std::min<uint32_t>(ledger.ndevices, kMaxDevices);
    for (unsigned d = 0; d < ledger.ndevices; ++d) {
        DeviceState &dev = ledger.devices[d];
        dev.reserved_bytes = 0;
        dev.in_use_warps = 0;
        dev.tasks = 0;
        std::memset(dev.sm_blocks, 0, sizeof dev.sm_blocks);
        std::memset(dev.sm_warps, 0, sizeof dev.sm_warps);
        std::memset(dev.sm_shared, 0, sizeof dev.sm_shared);
        if (dev.spec.sms > 0)
            dev.next_sm %= std::min<uint32_t>(dev.spec.sms, kMaxSms);
    }
    for (ProcessEntry &p : ledger.processes) {
        std::memset(p.reserved_bytes, 0, sizeof p.reserved_bytes);
        std::memset(p.in_use_warps, 0, sizeof p.in_use_warps);
    }
    uint64_t max_id = 0;
    for (const Grant &g : ledger.grants) {
        if (g.id == 0)
            continue;
        max_id = std::max(max_id, g.id);
        if (g.device >= ledger.ndevices)
            continue;  // counts nowhere; ledger_release still frees its slot
        DeviceState &dev = ledger.devices[g.device];
        add_grant_to_device(ledger, dev, g);
        if (g.per_sm)
            add_grant_per_sm(dev, g);
    }
    // A holder that died between writing a grant and moving the counter on must not make
    // the next grant reuse its id.
    ledger.next_grant_id = std::max(ledger.next_grant_id, max_id + 1);
}

}  // namespace hetpu::mgb
