// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu sim`: run a policy's cores on a simulated machine (see scenario.h).
#pragma once

namespace hetpu::sim {

int sim_command(int argc, char **argv);

}  // namespace hetpu::sim
