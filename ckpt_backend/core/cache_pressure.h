// SPDX-License-Identifier: LGPL-2.1-or-later
// How much device memory a checkpoint cache gives back under pressure, and when it may take
// it again. Pure decisions, no device: cache_shrink.h then picks the chunks.
//
// Pressure from the MGB arbiter is exact: each process with waiting tasks publishes what its
// oldest one needs on each device where only memory keeps it waiting (nothing when it waits
// for compute). The cache gives back just what ends that wait, on the one device where its
// own memory suffices at the smallest cost, so a task that waits for compute, or one that no
// cache of this process can unblock alone, costs the cache nothing.
//
// A cache that gave memory back grows again once the device has been quiet for a while, and
// waits twice as long after each new round of pressure (up to a ceiling; a device quiet for
// twice the ceiling starts over): an application
// whose data grows once gets its cache back, one that keeps needing the memory keeps it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hetpu::ckpt {

// lack[w][d]: bytes this process must give back on device d for waiter w's oldest task to
// start there now (0: it does not wait for memory there; UINT64_MAX: this process's memory
// cannot help there). cache_bytes[d]: this process's cache memory on device d. Returns the
// bytes to give back per device: for each waiter, its smallest lack that one device's cache
// covers, on that device (ties: the lower index); the largest such amount per device.
std::vector<std::uint64_t> plan_pressure_release(const std::vector<std::vector<std::uint64_t>> &lack,
                                                 const std::vector<std::uint64_t> &cache_bytes);

// When one device's cache may grow again after giving memory back. Times in seconds on any
// monotonic clock.
class RegrowBackoff {
public:
    // quiet_s: the first wait after pressure (0: a cache that gave memory back never grows
    // again); max_quiet_s: the ceiling of the doubling.
    RegrowBackoff(double quiet_s, double max_quiet_s);

    // The device asked for memory at `now` (or refused a chunk while the cache regrew).
    void pressure(double now);
    // Whether the cache may try one more chunk at `now`: it gave memory back before and the
    // device has asked for none for the current wait.
    bool may_grow(double now) const;
    bool shrunk() const { return shrunk_; }
    double wait_s() const { return wait_s_; }  // the current quiet time required

private:
    double quiet_s_, max_quiet_s_;
    double wait_s_ = 0, last_pressure_ = 0;
    bool shrunk_ = false;
};

}  // namespace hetpu::ckpt
