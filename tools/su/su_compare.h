// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu su compare`: the paper's Tables II-IV for any pair of partitions, the Fig. 1
// decision table, and its plot.
#pragma once

namespace hetpu::su {

int compare_command(int argc, char **argv);

}  // namespace hetpu::su
