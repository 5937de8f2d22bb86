// SPDX-License-Identifier: LGPL-2.1-or-later
// The node's device ledger: devices, grants and processes. Everything here runs under the
// caller's lock (a process-shared mutex when the Ledger is in the arbiter's segment): no
// allocation, no exceptions, bounded loops, and every mutation is a plain store into the POD
// Ledger.
#include "node_arbiter/core/device_ledger.h"

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

bool key_equals(const DeviceState &dev, std::string_view key)
{
    return std::string_view(dev.key, strnlen(dev.key, kDeviceKeyLength)) == key;
}

void add_grant_to_device(Ledger &ledger, DeviceState &dev, const Grant &g)
{
    dev.reserved_bytes += g.bytes;
    dev.in_use_warps += g.warps;
    if (g.algorithm != kMemoryOnly)
        ++dev.tasks;
    if (ProcessEntry *p = ledger_find_process(ledger, g.pid); p && g.device < kMaxDevices) {
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
    if (ProcessEntry *p = ledger_find_process(ledger, g.pid); p && g.device < kMaxDevices) {
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

const ProcessEntry *ledger_find_process(const Ledger &ledger, int32_t pid)
{
    if (pid <= 0)
        return nullptr;
    for (const ProcessEntry &p : ledger.processes)
        if (p.pid == pid)
            return &p;
    return nullptr;
}

ProcessEntry *ledger_find_process(Ledger &ledger, int32_t pid)
{
    return const_cast<ProcessEntry *>(ledger_find_process(static_cast<const Ledger &>(ledger), pid));
}

uint64_t ledger_headroom(const Ledger &ledger, const ProcessEntry *proc, unsigned d)
{
    uint64_t room = ledger.devices[d].free_bytes();
    if (proc && proc->limit_bytes[d] > 0) {
        const uint64_t own =
            proc->limit_bytes[d] > proc->reserved_bytes[d] ? proc->limit_bytes[d] - proc->reserved_bytes[d] : 0;
        room = std::min(room, own);
    }
    return room;
}

Grant *ledger_free_grant_slot(Ledger &ledger)
{
    for (Grant &g : ledger.grants)
        if (g.id == 0)
            return &g;
    return nullptr;
}

uint64_t ledger_commit_grant(Ledger &ledger, Grant &slot, Grant grant)
{
    // The id last, after the counter moved on: a holder dying here leaves at worst a skipped
    // id and a free slot, never two grants with one id.
    const uint64_t id = ledger.next_grant_id++;
    add_grant_to_device(ledger, ledger.devices[grant.device], grant);
    grant.id = id;
    slot = grant;
    return id;
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
    if (ProcessEntry *p = ledger_find_process(ledger, pid)) {
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

uint64_t ledger_reserve_memory(Ledger &ledger, unsigned device, int32_t pid, uint64_t bytes)
{
    if (device >= ledger.ndevices || bytes == 0)
        return 0;
    if (ledger_headroom(ledger, ledger_find_process(ledger, pid), device) < bytes)
        return 0;
    Grant *slot = ledger_free_grant_slot(ledger);
    if (!slot)
        return 0;
    Grant grant;
    std::memset(static_cast<void *>(&grant), 0, sizeof grant);
    grant.pid = pid;
    grant.device = uint16_t(device);
    grant.algorithm = kMemoryOnly;
    grant.bytes = bytes;
    return ledger_commit_grant(ledger, *slot, grant);
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
    if (ProcessEntry *p = ledger_find_process(ledger, g->pid))
        p->reserved_bytes[g->device] += bytes;
    return true;
}

const Grant *ledger_find_grant(const Ledger &ledger, uint64_t grant)
{
    return find_live_grant(const_cast<Ledger &>(ledger), grant);
}

int ledger_attach_process(Ledger &ledger, int32_t pid, std::string_view policy)
{
    if (pid <= 0)
        return -EINVAL;  // 0 marks a free slot
    if (ledger_find_process(ledger, pid))
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
    if (ProcessEntry *p = ledger_find_process(ledger, pid)) {
        std::memset(p, 0, sizeof *p);
        // Its limit leaves with it: the device is again what the others reported.
        for (unsigned d = 0; d < std::min<unsigned>(ledger.ndevices, kMaxDevices); ++d)
            ledger_recompute_capacity(ledger, d);
    }
    return released;
}

void ledger_set_waiting(Ledger &ledger, int32_t pid, uint32_t waiting, const uint64_t *memory_wait)
{
    if (ProcessEntry *p = ledger_find_process(ledger, pid)) {
        p->waiting = waiting;
        if (waiting == 0)
            p->bypassed = 0;  // nothing of it waits: nothing to age
        if (memory_wait && waiting > 0)
            std::memcpy(p->memory_wait_bytes, memory_wait, sizeof p->memory_wait_bytes);
        else
            std::memset(p->memory_wait_bytes, 0, sizeof p->memory_wait_bytes);
    }
}

uint64_t ledger_memory_lack(const Ledger &ledger, int32_t waiter, unsigned device, uint64_t need, int32_t releaser)
{
    if (device >= std::min<unsigned>(ledger.ndevices, kMaxDevices))
        return UINT64_MAX;
    const ProcessEntry *proc = ledger_find_process(ledger, waiter);
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
