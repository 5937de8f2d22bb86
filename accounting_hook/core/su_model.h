// SPDX-License-Identifier: LGPL-2.1-or-later
// The energy-based service-unit model of the accounting paper (Section IV):
//
//   cost(n, w, t, fc, fg, fm) = w * t * sum_{i=1..n} max(fc_i, fg_i, fm_i)        (Eq. 1)
//
// with w = C for a CPU partition and w = (sum GPU TDP / sum CPU TDP) * C for a GPU
// partition (Eq. 15), t in hours, and the memory fraction quantised to whole per-core
// shares (Eq. 9 with the erratum fixed, docs/design.md "Accounting Eq. (9) memory fraction": ceil(M_used / (M_tot / C)) is a core count, the
// fraction is that count / C).
#pragma once

#include <vector>

#include "accounting_hook/core/partition.h"

namespace hetpu::accounting {

// What one job holds on one node, as fractions of that node.
struct NodeFractions {
    double cores = 0;   // fc
    double gpus = 0;    // fg
    double memory = 0;  // fm
    double max() const;
};

// SU per node-hour of the partition (Eq. 15, or C for a partition without GPUs).
double energy_weight(const Partition &p);

// ceil(used / (total / C)) / C, at most 1 (a job cannot hold more than the node); 0 for
// no memory. Throws std::invalid_argument on non-positive total or cores, negative use.
double memory_fraction(double used_gib, double total_gib, int cores_per_node);

// The fractions of a node held by `cores` cores, `gpus` GPUs and `mem_gib` memory. Throws
// std::invalid_argument when a count exceeds what the node has.
NodeFractions node_fractions(const Partition &p, double cores, double gpus, double mem_gib);

// Eq. 1. Throws std::invalid_argument on negative weight or hours.
double cost(double weight, double hours, const std::vector<NodeFractions> &nodes);

// The same job on `nodes` identical nodes.
double cost(double weight, double hours, const NodeFractions &per_node, int nodes);

}  // namespace hetpu::accounting
