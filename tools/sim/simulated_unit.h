// SPDX-License-Identifier: LGPL-2.1-or-later
// How long a simulated processing unit takes for a block, from its scenario description.
#pragma once

#include <cstdint>
#include <random>

#include "tools/sim/scenario.h"

namespace hetpu::sim {

struct BlockCost {
    double exec_s = 0;
    double transfer_s = 0;
    double unseen_s = 0;  // from hand-out to the earliest start (overlaps a running block)
    double stall_s = 0;   // added to the block's end
    // What the block costs a unit that was idle when it was handed out.
    double total() const { return exec_s + transfer_s + unseen_s + stall_s; }
};

class SimulatedUnit {
public:
    explicit SimulatedUnit(UnitSpec spec) : spec_(std::move(spec)) {}

    const UnitSpec &spec() const { return spec_; }

    // Profile time for x elements: piecewise-linear between the points, the last segment
    // extended linearly beyond them (a single point means proportional), the first one
    // below the first point but kept between proportional to it and its time.
    double exec_time(double x) const;
    double transfer_time(double x) const { return x > 0 ? spec_.latency_s + spec_.per_element_s * x : 0; }

    // Slowdown factor in force at simulated time t (the last one started, 1 before any).
    double factor_at(double t) const;

    // Noise-free, slowdown-free, stall-free cost: what the optimum is computed from (the
    // unseen time is a cost of every block like any other).
    BlockCost nominal_cost(uint64_t x) const
    {
        return {exec_time(double(x)), transfer_time(double(x)), x > 0 ? spec_.unseen_s : 0.0};
    }

    // The cost of a block started at `start`: slowdown in force at the start, times a
    // multiplicative noise drawn from N(1, noise) clamped to [0.2, 5], on exec and transfer;
    // and, with the stall probability, a stall (drawn only for a unit that may stall, so
    // that other scenarios' runs do not change).
    BlockCost cost(uint64_t x, double start, std::mt19937_64 &rng) const;

private:
    UnitSpec spec_;
};

}  // namespace hetpu::sim
