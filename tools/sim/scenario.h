// SPDX-License-Identifier: LGPL-2.1-or-later
// A simulated machine for `hetpu sim`: processing units described by measured-looking
// time curves, transfer costs, noise and slowdowns, read from a JSON scenario:
//
//   {"workload": 100000, "granule": 64, "x_init": 1024,
//    "units": [{"name": "A.gpu0", "profile": [[1024, 0.010], [8192, 0.045]],
//               "transfer": [0.0005, 2.0e-7], "noise": 0.03, "slowdown": [[142.0, 2.5]],
//               "unseen": 0.004, "stall": [0.01, 0.5], "power_w": 250}],
//    "base_power_w": 90}
//
// "unseen" and "stall" are what a real node adds that StarPU's profiling does not report
// (seen on one H200 and 15 CPU workers: a GPU block ended 6-11 ms after its execution and
// transfers, and in about one run in ten a block waited 0.25-1.5 s). A block can start no sooner than
// "unseen" seconds after it was handed out (dispatch, its input prefetched): behind
// another block of its unit that time passes while that one runs, as StarPU prefetches a
// queued task's data, so only a block that finds its unit idle pays it. A stall adds its
// seconds to the block's end. Neither is in the exec and transfer times the policy is told.
//
// "power_w" (a unit's dynamic power while busy, default 1 W: its energy then counts its busy
// seconds) and "base_power_w" (the machine's static power, default 0) price the energy of
// the profiles hepopta and htpopta plan from (scenario_profiles.h).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hetpu::sim {

struct ScenarioError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct UnitSpec {
    std::string name;
    // Class used to aggregate statistics ("cpu", "gpu", ...): the "class" field, else the
    // part of the name after the last '.', without trailing digits ("A.gpu0" -> "gpu").
    std::string unit_class;
    std::vector<std::pair<double, double>> profile;   // (elements, seconds), sizes increasing
    double latency_s = 0;                             // transfer: latency ...
    double per_element_s = 0;                         // ... plus seconds per element
    double noise = 0;                                 // relative standard deviation
    std::vector<std::pair<double, double>> slowdown;  // (simulated time, factor), times increasing
    double unseen_s = 0;           // per block, from its hand-out to its start at the earliest, not reported
    double stall_probability = 0;  // a block stalls with this probability ...
    double stall_s = 0;            // ... and then ends this much later, unreported too
    double power_w = 1;            // dynamic power while busy (energy of the derived profiles)
};

struct Scenario {
    uint64_t workload = 0;
    uint64_t granule = 1;
    uint64_t x_init = 0;      // first block size (training); 0: workload / (16 * units)
    uint64_t min_block = 0;   // 0: granule
    double base_power_w = 0;  // static power of the machine (htpopta's P_S)
    std::vector<UnitSpec> units;
};

// Parses and validates; throws ScenarioError naming the offending field and unit.
Scenario parse_scenario(const std::string &json_text);
Scenario load_scenario(const std::string &path);

}  // namespace hetpu::sim
