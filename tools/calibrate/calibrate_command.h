// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu calibrate`: time and dynamic-energy profiles of an app's codelet on every worker,
// written as the CSV `hetpu pareto` and the hepopta/htpopta policies read.
#pragma once

namespace hetpu::calibrate {

// argv without the subcommand; returns the exit status.
int calibrate_command(int argc, char **argv);

}  // namespace hetpu::calibrate
