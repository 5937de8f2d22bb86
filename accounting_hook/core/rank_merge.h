// SPDX-License-Identifier: LGPL-2.1-or-later
// One ledger row for a multi-rank (MPI) job: every rank charges what its own process held
// (or, under Slurm, task 0 the whole allocation), rank 0 gathers those records and merges
// them. Pure C++ (no MPI): the glue moves the records as the text of to_wire().
#pragma once

#include <string>
#include <vector>

#include "accounting_hook/core/job_record.h"

namespace hetpu::accounting {

// A JobRecord as one line of text (JSON), and back. from_wire throws std::invalid_argument
// on malformed input.
std::string to_wire(const JobRecord &job);
JobRecord from_wire(const std::string &text);

// The job's record from its ranks' records (index = rank, at least one): SU, energy, busy
// time and tasks summed; wall time the longest; nodes = `nodes` (the distinct hosts, or the
// Slurm allocation's count when that is larger); per-node holdings and fractions are the
// per-rank sums divided by the nodes (several ranks on one node add up); every worker row
// is named after its rank ("rank1/cpu"), so the ledger keeps one row per rank and type.
// Energy sources are joined ("rapl+model") when ranks differ. Identity fields (user, app,
// policy, partition, Slurm job) come from rank 0, host lists the distinct hosts.
JobRecord merge_rank_records(const std::vector<JobRecord> &ranks, int nodes);

}  // namespace hetpu::accounting
