// SPDX-License-Identifier: LGPL-2.1-or-later
// The accounting hook: StarPU glue between hetpu's policy resolution (runtime/start/init.cpp, which
// calls it as its RunObserver, runtime/start/run_observer.h) and the pure accounting core. Every StarPU run started through hetpu_init() or the preload
// library is charged: the resolved policy (hetpu's or a StarPU built-in) is copied with its
// pre/post_exec_hook wrapped, per-worker busy time is counted in the hot path, and at
// shutdown the run is charged, summarised on stderr and written to the ledger.
//
//   HETPU_ACCOUNTING=0             off (no wrapping, no ledger row)
//   HETPU_ACCOUNTING_QUIET=1       no summary on stderr (ledger errors are still printed)
//   HETPU_LEDGER=FILE              the ledger (default $HETPU_HOME/ledger.sqlite)
//   HETPU_PARTITION_CONFIG=FILE    partitions (TOML); else this node, detected by hwloc
//   HETPU_PARTITION=NAME           which partition of the config (else SLURM_JOB_PARTITION,
//                                  [accounting] partition, or the only one)
//   HETPU_GRID_GCO2E_PER_KWH=G     carbon intensity (overrides the config's)
//   HETPU_ENERGY=rapl|nvml|model   energy source (perfmodels/energy)
#pragma once

struct starpu_sched_policy;

namespace hetpu::accounting {

// HETPU_ACCOUNTING is unset or not one of 0/off/no/false.
bool accounting_enabled();

// Returns a copy of `resolved` whose exec hooks also do the accounting; `resolved` itself is
// not modified. Call before starpu_initialize, with accounting enabled.
struct starpu_sched_policy *wrap_policy(struct starpu_sched_policy *resolved);

// After starpu_initialize succeeded on a wrapped policy: workers, start time, partition,
// energy sources. Never throws; problems are printed and the run goes on uncharged.
void run_started(const char *policy_name);

// After starpu_shutdown: charge, summary, ledger row. Runs at most once per run_started
// (also from an atexit handler, for programs that never shut StarPU down through hetpu).
void run_finished();

}  // namespace hetpu::accounting
