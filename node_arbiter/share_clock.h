// SPDX-License-Identifier: LGPL-2.1-or-later
// The arbiter's share clock: for every registered process and device, the time
// integrals of its share and of its charged weight (node_arbiter/core/device_share.h has
// the rules), kept beside the Ledger in the arbiter's shared memory.
//
// The Ledger changes only under the arbiter's lock, so it is piecewise constant between two
// lock holdings: the clock is advanced at every lock, before anything changes, with the
// state as it stood since the previous lock. Nothing is sampled: every grant and release is
// an edge of the integral. A SIGKILLed process keeps its grants (and so its share) until a
// locker notices its death and reclaims them, which every lock checks: its share-time up to
// then stays its own, and the others' do not grow.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include "node_arbiter/core/device_ledger.h"

namespace hetpu::mgb {

struct ShareAccount {
    int32_t pid;                     // 0: free slot
    uint32_t peers[kMaxDevices];     // most other processes attached to the device at once
    double attached_s[kMaxDevices];  // time attached (reported the device, or held on it)
    double share_s[kMaxDevices];     // integral of max(bytes / capacity, warps / warp capacity)
    double weight_s[kMaxDevices];    // integral of the charged weight
    // Its part of each device's energy, split at the counter readings (device_share.h's
    // ShareEnergy): weight-seconds since the device's last reading, joules so far, and the
    // counter at the start of its first charged segment and at the end of its last.
    double segment_weight_s[kMaxDevices];
    double joules[kMaxDevices], from_j[kMaxDevices], to_j[kMaxDevices];
    uint32_t segments[kMaxDevices];
};

struct ShareClock {
    uint64_t last_ns;  // CLOCK_MONOTONIC of the last advance (node-wide); 0: not started
    ShareAccount accounts[kMaxProcesses];
    uint64_t reading_ns[kMaxDevices];  // when each device's energy counter was last read (0: never)
    double reading_j[kMaxDevices];     // what it read
};
static_assert(std::is_trivially_copyable_v<ShareClock>, "the clock lives in shared memory");

// Integrates [last_ns, now_ns) with `ledger` as it stood over that interval (call it before
// changing the Ledger), then gives every registered process an account and frees the
// accounts of processes no longer registered. The first call only starts the clock.
// With a reader installed (below), it then reads each device's energy counter and splits
// the segment since the device's last reading among the accounts: the sharers' parts add up
// to the device's joules over their charged intervals, for any overlap pattern. A process
// leaving the arbiter is split up to its own last lock; a killed one up to the lock that
// reclaims it (its part is nobody's: it leaves no ledger row).
void share_clock_advance(ShareClock &clock, const Ledger &ledger, uint64_t now_ns);

// A device's energy counter by the arbiter's device key: cumulative joules, the same in
// every process of the node (NVML's per-GPU counter); nullopt when this process cannot read
// that device's counter. Called under the arbiter's lock, on every advance of this process.
using DeviceEnergyReader = std::function<std::optional<double>(const char *key)>;
// Installs this process's reader (an empty one removes it). Thread-safe; returns once no
// advance is still calling the previous one.
void set_device_energy_reader(DeviceEnergyReader reader);

// A process's share-time per device, as the accounting hook reads it.
struct ShareSnapshot {
    struct Device {
        std::string key;
        uint64_t capacity = 0;
        uint32_t peers = 0;  // most other processes attached at once (0: it had the device alone)
        double attached_s = 0, share_s = 0, weight_s = 0;
        double joules = 0, from_j = 0, to_j = 0;  // its part of the device's energy (segments > 0)
        uint32_t segments = 0;
    };
    int32_t pid = 0;
    std::string policy;
    std::vector<Device> devices;  // those it was attached to
};
// nullopt when pid has no account.
std::optional<ShareSnapshot> share_clock_snapshot(const ShareClock &clock, const Ledger &ledger, int32_t pid);

// This process's last snapshot: taken by the NodeArbiter as the process leaves the arbiter
// (the scheduler's deinit, before the accounting hook charges the run). Cleared when the
// process opens an arbiter again. Thread-safe.
void remember_own_share(std::optional<ShareSnapshot> snapshot);
std::optional<ShareSnapshot> own_share();

}  // namespace hetpu::mgb
