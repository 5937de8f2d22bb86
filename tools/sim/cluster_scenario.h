// SPDX-License-Identifier: LGPL-2.1-or-later
// A simulated cluster for `hetpu sim --cluster`: node types (their processing units, as in
// a single-node scenario, and their network link), the nodes (a type each, optionally a
// slowdown or a failure), rank 0's own link and the job's data per element:
//
//   {"workload": 4000000, "granule": 64, "x_init": 1024,
//    "bytes_in": 32768, "bytes_out": 32768,
//    "rank0_link": [5e-6, 12.5e9],
//    "node_types": {"G": {"link": [5e-6, 12.5e9], "units": [{"name": "cpu0", ...}, ...]}},
//    "nodes": [{"type": "G"}, {"type": "G", "slowdown": 3.0}, {"type": "G", "fail_at": 20.0}]}
//
// A link is [latency seconds, bytes per second]; node 0 is rank 0. "slowdown" multiplies
// every unit's times on that node from the start; "fail_at" stops the node at that time;
// "moves": false keeps the node out of every re-sharing move. The coordinator's report
// cadence is the real runner's (runtime/mpi/core/coordinator_cadence.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/sim/scenario.h"

namespace hetpu::sim {

struct Link {
    double latency_s = 5e-6;
    double bytes_per_s = 12.5e9;
};

struct ClusterNode {
    std::string type;
    std::vector<UnitSpec> units;  // the type's units, named "n<i>.<name>", slowdown applied
    Link link;
    double fail_at_s = -1;  // < 0: never
    bool moves = true;      // false: it takes part in no re-sharing move
};

struct ClusterScenario {
    uint64_t workload = 0;
    uint64_t granule = 1;
    uint64_t x_init = 0;
    uint64_t min_block = 0;
    double bytes_in = 0;   // per element: inputs to the unit that runs it
    double bytes_out = 0;  // per element: results back to their owner
    Link rank0_link;
    std::vector<ClusterNode> nodes;

    size_t pus() const;
};

// Parses and validates; throws ScenarioError naming the field.
ClusterScenario parse_cluster(const std::string &json_text);
ClusterScenario load_cluster(const std::string &path);

}  // namespace hetpu::sim
