// SPDX-License-Identifier: LGPL-2.1-or-later
#pragma once

namespace hetpu::sim {

// `hetpu cluster-sim`: a divisible job on a simulated cluster, central or per-node planning,
// the network charged (tools/sim/cluster_sim.h).
int cluster_sim_command(int argc, char **argv);

}  // namespace hetpu::sim
