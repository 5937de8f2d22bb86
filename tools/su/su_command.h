// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu su`: the accounting model from the command line.
//
//   hetpu su rate    --config FILE [--partition NAME] [--json]
//   hetpu su charge  --config FILE --partition NAME --nodes N --cores C --mem-gib M --gpus G --hours H [--json]
//   hetpu su compare --config FILE --benchmarks FILE.csv [--cpu-partition NAME] [--gpu-partition NAME]
//                    [--plot FILE.png] [--max-speedup S] [--json]
//   hetpu su report  [--ledger FILE] [--since DATE] [--by user|partition|app] [--json]
#pragma once

namespace hetpu::su {

// argv[0] is the subcommand (rate, charge, ...). Returns the exit status: 0, 1 on bad input
// or files, 2 on bad usage.
int su_command(int argc, char **argv);

}  // namespace hetpu::su
