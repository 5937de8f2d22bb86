// SPDX-License-Identifier: LGPL-2.1-or-later
// MGB's placement algorithms over the device ledger. Everything here runs under the caller's
// lock (a process-shared mutex when the Ledger is in the arbiter's segment): no allocation,
// no exceptions, bounded loops, and every mutation is a plain store into the POD Ledger.
#include "sched_policies/mgb/core/gpu_ledger.h"

#include <algorithm>
#include <cstring>

namespace hetpu::mgb {

namespace {

bool allowed(const PlaceRequest &request, unsigned d) { return d < 32 && (request.allowed_devices >> d) & 1u; }

uint64_t bytes_on(const PlaceRequest &request, unsigned d)
{
    return request.bytes_on_device ? request.bytes_on_device[d] : request.needs.bytes;
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

// Each device's time load under time-slicing, were the task placed there (gpu_ledger.h):
// the other processes' busy shares plus min(1000, the requester's own + the task's). One
// pass over the grant table, so it needs no per-process bookkeeping (the simulator's and a
// single process's requesters are not registered processes).
struct TimeLoad {
    uint64_t with_task[kMaxDevices] = {};
    bool others[kMaxDevices] = {};  // another process has work there
    uint32_t older_waiting = 0;     // PlaceRequest::older_waiting_devices
    bool fits(unsigned d) const { return with_task[d] <= 1000 && !(others[d] && ((older_waiting >> d) & 1u)); }
};

TimeLoad time_load(const Ledger &ledger, const PlaceRequest &request)
{
    TimeLoad load;
    uint64_t own[kMaxDevices] = {};
    for (const Grant &g : ledger.grants) {
        if (g.id == 0 || g.algorithm == kMemoryOnly || g.device >= kMaxDevices)
            continue;
        const uint64_t busy = std::min<uint32_t>(g.busy_permille, 1000u);
        (g.pid == request.pid ? own : load.with_task)[g.device] += busy;
        load.others[g.device] = load.others[g.device] || g.pid != request.pid;
    }
    load.older_waiting = request.older_waiting_devices;
    const uint64_t task = busy_share_permille(request.needs);
    for (unsigned d = 0; d < kMaxDevices; ++d)
        load.with_task[d] += std::min<uint64_t>(own[d] + task, 1000);
    return load;
}

bool time_sliced(const PlaceRequest &request) { return request.colocation == Colocation::TimeSliced; }

// Alg. 2 (Exact): first fit over devices, in index order. Time-sliced: of the devices where
// it fits (memory, SMs, and the time load), the least loaded; ties in index order.
int choose_exact(Ledger &ledger, const PlaceRequest &request, const ProcessEntry *proc, Grant &grant)
{
    TimeLoad load;
    if (time_sliced(request))
        load = time_load(ledger, request);
    int best = -1;
    uint8_t best_placed[kMaxSms] = {};
    uint32_t best_next_sm = 0;
    for (unsigned d = 0; d < ledger.ndevices; ++d) {
        DeviceState &dev = ledger.devices[d];
        if (!allowed(request, d) || bytes_on(request, d) > ledger_headroom(ledger, proc, d))
            continue;
        if (time_sliced(request) && (!load.fits(d) || (best >= 0 && load.with_task[d] >= load.with_task[best])))
            continue;
        const Footprint fp = footprint_on(request.needs, dev.spec);
        if (!fp.runnable)
            continue;
        uint8_t placed[kMaxSms] = {};
        uint32_t next_sm = dev.next_sm;
        if (!exact_round_robin(dev, fp, placed, next_sm))
            continue;
        best = int(d);
        std::memcpy(best_placed, placed, sizeof best_placed);
        best_next_sm = next_sm;
        if (!time_sliced(request))
            break;  // first fit
    }
    if (best >= 0) {
        DeviceState &dev = ledger.devices[best];
        const Footprint fp = footprint_on(request.needs, dev.spec);
        const uint8_t *placed = best_placed;
        const uint32_t next_sm = best_next_sm;
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
    }
    return best;
}

// Alg. 3 with the erratum (docs/design.md, "MGB Algorithm 3 least-loaded GPU"): among
// memory-feasible devices, the least loaded; strict < keeps the lowest index on ties. Compute
// is soft: in_use_warps may exceed max_warps().
//
// Load is a share of each device, not a count of warps: the warps in use once the
// task is placed there, over the device's resident-warp capacity. Comparing absolute warps
// (the paper's G.InUseWarps) sends every job to a small GPU beside a large one, because a
// device-filling kernel occupies fewer warps on the small one. Among identical devices the
// share orders them exactly as the warp count does. Compared by cross-multiplication: no
// rounding, and the products stay below 2^64 (warps < 2^40, capacity < 2^24).
//
// Time-sliced, the time load comes first (gpu_ledger.h): warps shared with another process's
// kernel buy nothing when the two take turns.
int choose_least_warps(const Ledger &ledger, const PlaceRequest &request, const ProcessEntry *proc)
{
    TimeLoad time;
    if (time_sliced(request))
        time = time_load(ledger, request);
    int best = -1;
    uint64_t best_load = 0, best_capacity = 1;
    for (unsigned d = 0; d < ledger.ndevices; ++d) {
        const DeviceState &dev = ledger.devices[d];
        if (!allowed(request, d) || bytes_on(request, d) > ledger_headroom(ledger, proc, d))
            continue;
        const Footprint fp = footprint_on(request.needs, dev.spec);
        if (!fp.runnable)
            continue;
        if (time_sliced(request)) {
            if (!time.fits(d) || (best >= 0 && time.with_task[d] > time.with_task[best]))
                continue;
            if (best >= 0 && time.with_task[d] < time.with_task[best])
                best = -1;  // strictly less time load: wins whatever its warps
        }
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

bool could_ever_fit(const Ledger &ledger, int device, const PlaceRequest &request)
{
    if (device < 0 || unsigned(device) >= ledger.ndevices || !allowed(request, unsigned(device)))
        return false;
    const DeviceState &dev = ledger.devices[device];
    const uint64_t bytes = bytes_on(request, unsigned(device));
    const ProcessEntry *proc = ledger_find_process(ledger, request.pid);
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
    ProcessEntry *proc = ledger_find_process(ledger, request.pid);
    if (proc) {
        const ProcessEntry *starved = starved_process(ledger);
        if (starved && starved != proc)
            return result;  // another process has waited long enough: it goes first
    }
    // A full grant table is a transient shortage like any other: tasks end and free slots.
    Grant *slot = ledger_free_grant_slot(ledger);
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
    grant.busy_permille = busy_share_permille(request.needs);
    const uint64_t id = ledger_commit_grant(ledger, *slot, grant);
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

bool ledger_release_handing_over(Ledger &ledger, uint64_t grant, const HandleTransfer *transfers, size_t count)
{
    const Grant *g = ledger_find_grant(ledger, grant);
    if (!g)
        return false;
    for (size_t i = 0; i < count; ++i) {
        const Grant *to = ledger_find_grant(ledger, transfers[i].to_grant);
        if (to && to->device == g->device)  // the same device's data, never another's
            ledger_grow_grant(ledger, transfers[i].to_grant, transfers[i].bytes);
    }
    return ledger_release(ledger, grant);
}

void ledger_memory_wait(const Ledger &ledger, Algorithm algorithm, const PlaceRequest &request,
                        uint64_t out[kMaxDevices])
{
    std::fill(out, out + kMaxDevices, uint64_t(0));
    if (algorithm != Algorithm::Exact && algorithm != Algorithm::LeastWarps)
        return;  // blind to memory: their tasks wait for a device's compute only
    const ProcessEntry *proc = ledger_find_process(ledger, request.pid);
    TimeLoad time;
    if (time_sliced(request))
        time = time_load(ledger, request);
    for (unsigned d = 0; d < std::min<unsigned>(ledger.ndevices, kMaxDevices); ++d) {
        if (!allowed(request, d) || !could_ever_fit(ledger, int(d), request))
            continue;
        const DeviceState &dev = ledger.devices[d];
        const Footprint fp = footprint_on(request.needs, dev.spec);
        if (!fp.runnable || bytes_on(request, d) <= ledger_headroom(ledger, proc, d))
            continue;  // memory is not what it lacks here
        if (time_sliced(request) && !time.fits(d))
            continue;                         // the device's time is full too
        if (algorithm == Algorithm::Exact) {  // compute is hard: it must fit the SMs now
            uint8_t placed[kMaxSms] = {};
            uint32_t next_sm = dev.next_sm;
            if (!exact_round_robin(dev, fp, placed, next_sm))
                continue;
        }
        out[d] = bytes_on(request, d);
    }
}

}  // namespace hetpu::mgb
