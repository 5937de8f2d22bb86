// SPDX-License-Identifier: LGPL-2.1-or-later
// A run's backup copies, as both runners handle them (runtime/divisible/local_run.cpp,
// runtime/mpi/mpi_owned_run.cpp): whether the job takes them, and what is left of them when
// the job returns. StarPU glue over the pure TaskLedger (task_ledger.h).
#pragma once

#include <hetpu/divisible.h>

#include <map>

#include "runtime/divisible/block_run.h"

namespace hetpu {

// Whether a job opted in to backup copies (all of fill_private, commit, discard set).
// Returns -EINVAL (said on stderr) when only some of the three are set.
int job_backup_hooks(const hetpu_divisible_job &job, const char *label, bool &opted_in);

// Tells the run's dispatcher whether the job takes copies (`supported`: the runner can run
// them) and decides whether its blocks run into private output. Before start_run().
void choose_copies(Run &run, bool opted_in, bool supported);

// Units still running losing copies of earlier jobs count as busy for this run until those
// copies' expected ends (BlockDispatcher::set_busy_until). After choose_copies().
void note_units_busy_with_copies(Run &run);

// The backup copies of a run when its job returned.
struct RunCopies {
    CopyFigures figures;
    std::map<int, double> lost_s;    // by worker: seconds of thrown-away work
    std::map<int, unsigned> copies;  // by worker: copies handed to it
    unsigned copies_of(int worker) const;
    double lost_s_of(int worker) const;
};

// The job returns: from now on what ends late (losing copies) no longer reaches the
// dispatcher or the planner; the units of the copies still running count as busy for the
// next job until their expected end. Call after wait_until_done(), then fill the report
// (fill_report_copies), then release_planner().
RunCopies close_run(Run &run);

// The report's job-level copy fields (the per-worker ones are filled by the runner, which
// knows how its workers are numbered).
void fill_report_copies(hetpu_divisible_report &report, const RunCopies &copies);

// The dispatcher and the planner go (the planner hands on what it learnt now, for the next
// job); the run's bookkeeping stays as long as a losing copy still runs.
void release_planner(Run &run);

}  // namespace hetpu
