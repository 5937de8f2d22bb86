// SPDX-License-Identifier: LGPL-2.1-or-later
// Which point of a Pareto front a run uses (HETPU_TRADEOFF of the hepopta/htpopta
// policies). Pure C++, no StarPU.
#pragma once

#include <string>
#include <vector>

#include "sched_policies/pareto/core/pareto_front.h"
#include "sched_policies/pareto/core/pareto_profiles.h"

namespace hetpu {

struct Tradeoff {
    enum Kind { Time, Energy, Slowdown } kind = Time;
    double slowdown = 0;  // Slowdown: accepted fraction of extra time over the fastest (0.05)
};

// "time", "energy" or "slowdown<=X%" (X a number >= 0, e.g. slowdown<=5%). Throws
// std::invalid_argument naming the accepted forms.
Tradeoff parse_tradeoff(const std::string &text);

std::string tradeoff_name(const Tradeoff &t);  // the text parse_tradeoff accepts

// Index into `front` (increasing energy, non-empty): Time: the fastest point; Energy: the
// cheapest; Slowdown: the cheapest among points with time <= (1 + slowdown) x fastest.
std::size_t pick_tradeoff(const std::vector<Distribution> &front, EnergyObjective objective, const Tradeoff &t);

}  // namespace hetpu
