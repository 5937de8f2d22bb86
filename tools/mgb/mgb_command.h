// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu mgb`: the node-wide MGB arbiter from the command line.
//
//   hetpu mgb status [--json] [--arbiter NAME]   devices, reservations and processes
//   hetpu mgb reset  [--arbiter NAME] [--force]  remove the segment (administrators)
#pragma once

namespace hetpu::mgb_cli {

// argv[0] is the subcommand (status, reset). Returns the exit status: 0, 1 when the segment
// cannot be read or removed, 2 on bad usage.
int mgb_command(int argc, char **argv);

}  // namespace hetpu::mgb_cli
