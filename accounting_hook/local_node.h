// SPDX-License-Identifier: LGPL-2.1-or-later
// The partition a run is charged against when no config names one: this node, as hwloc
// sees it. hwloc knows cores, sockets and memory but not power, so the TDPs are stated
// assumptions that the summary prints; a site sets real figures in a partition config.
#pragma once

#include <hwloc.h>

#include "accounting_hook/core/partition.h"

namespace hetpu::accounting {

// Assumed when detecting: watts per busy CPU core, and per GPU.
constexpr double assumed_cpu_core_w = 10;
constexpr double assumed_gpu_tdp_w = 300;

// `gpus`: GPUs the run drives (hwloc without I/O discovery does not see them). `loaded`: a
// topology already loaded (StarPU's), else one is loaded here (~10-30 ms). Falls back to
// sysconf figures if hwloc fails.
Partition detect_local_node(int gpus, hwloc_topology_t loaded = nullptr);

}  // namespace hetpu::accounting
