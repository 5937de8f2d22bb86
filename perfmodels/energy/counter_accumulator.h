// SPDX-License-Identifier: LGPL-2.1-or-later
// Turns a hardware energy counter that wraps (RAPL's energy_uj restarts at
// max_energy_range_uj, every minute or so on a busy socket) into a monotone total.
#pragma once

#include <cstdint>

namespace hetpu::energy {

class CounterAccumulator {
public:
    // `range` is the value at which the raw counter wraps to 0; 0 means it never wraps.
    explicit CounterAccumulator(std::uint64_t range = 0) : range_(range) {}

    // Feeds one raw reading and returns the total since the first reading. A reading below the
    // previous one is one wrap: more than one wrap between two readings cannot be told apart,
    // which is why sources sample faster than the shortest wrap period.
    std::uint64_t feed(std::uint64_t raw);
    std::uint64_t total() const { return total_; }

private:
    std::uint64_t range_;
    std::uint64_t last_ = 0;
    std::uint64_t total_ = 0;
    bool started_ = false;
};

}  // namespace hetpu::energy
