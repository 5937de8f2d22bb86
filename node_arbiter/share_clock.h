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
};

struct ShareClock {
    uint64_t last_ns;  // CLOCK_MONOTONIC of the last advance (node-wide); 0: not started
    ShareAccount accounts[kMaxProcesses];
};
static_assert(std::is_trivially_copyable_v<ShareClock>, "the clock lives in shared memory");

// Integrates [last_ns, now_ns) with `ledger` as it stood over that interval (call it before
// changing the Ledger), then gives every registered process an account and frees the
// accounts of processes no longer registered. The first call only starts the clock.
void share_clock_advance(ShareClock &clock, const Ledger &ledger, uint64_t now_ns);

// A process's share-time per device, as the accounting hook reads it.
struct ShareSnapshot {
    struct Device {
        std::string key;
        uint64_t capacity = 0;
        uint32_t peers = 0;  // most other processes attached at once (0: it had the device alone)
        double attached_s = 0, share_s = 0, weight_s = 0;
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
