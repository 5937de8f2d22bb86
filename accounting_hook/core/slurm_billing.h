// SPDX-License-Identifier: LGPL-2.1-or-later
// Slurm's TRESBillingWeights, so a centre can put its current scheme next to this model.
//
//   TRESBillingWeights="CPU=1.0,Mem=0.25G,GRES/gpu=48"
//
// Without PriorityFlags=MAX_TRES the billing is the weighted sum of the TRES; with it, the
// maximum of the node-level TRES (cpu, mem, gres) — which is exactly Eq. 1 of the energy
// model when the weights are CPU = w/C, Mem = w/M_tot per GiB, GRES/gpu = w/G (bar the
// model's rounding of memory up to whole per-core shares).
#pragma once

#include <string>

#include "accounting_hook/core/partition.h"

namespace hetpu::accounting {

struct TresWeights {
    double cpu = 0;
    double mem_per_gib = 0;
    double gpu = 0;
};

// Parses Slurm's syntax: comma-separated TRES=weight; TRES names are case-insensitive
// (CPU, Mem, GRES/gpu, GRES/gpu:type counted as gpu); a Mem weight is per MiB unless
// suffixed K, M, G or T (per KiB ... TiB). Throws std::invalid_argument naming the bad item.
TresWeights parse_tres_billing_weights(const std::string &text);

// Slurm-style text for `w` (Mem with a G suffix); each weight to 9 significant digits,
// rounded up, so that Slurm's billing, truncated to an integer, never falls below the model.
std::string format_tres_billing_weights(const TresWeights &w);

// Billing units per hour for one node holding cpus/mem/gpus.
double slurm_billing(const TresWeights &w, double cpus, double mem_gib, double gpus, bool max_tres);

// The weights that make Slurm's MAX_TRES billing charge what Eq. 1 charges on partition p.
TresWeights equivalent_tres_weights(const Partition &p);

}  // namespace hetpu::accounting
