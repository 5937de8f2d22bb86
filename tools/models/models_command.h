// SPDX-License-Identifier: LGPL-2.1-or-later
// `hetpu models`: the PLB-HAC models saved across runs (sched_policies/plbhac/core/plbhac_model_store.h).
//
//   hetpu models list  [--home DIR] [--json]        one line per saved job/worker set/host
//   hetpu models show  JOB [--home DIR] [--json]    the models of a job: points, size range,
//                                                   curves and predictions per worker
//   hetpu models clear [JOB] [--all] [--home DIR]   remove a job's files, or every file
#pragma once

namespace hetpu::models_cli {

// argv[0] is the subcommand. Returns 0, 1 when a file cannot be read or removed or the job
// has no models, 2 on bad usage.
int models_command(int argc, char **argv);

}  // namespace hetpu::models_cli
