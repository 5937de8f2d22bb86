// SPDX-License-Identifier: LGPL-2.1-or-later
// The few MPI facts and collectives other modules of libhetpu (accounting, checkpoints)
// need, without MPI's headers: they compile the same with or without MPI support.
#pragma once

#include <string>
#include <vector>

namespace hetpu {

// Ranks of the running job: 0 and 1 unless hetpu_init_mpi() started StarPU-MPI (and until
// hetpu_shutdown() finalises it).
int mpi_rank();
int mpi_size();

// Collective: every rank's string, in rank order, on rank 0; empty elsewhere and in a
// single process (where it returns {mine}).
std::vector<std::string> mpi_gather_to_root(const std::string &mine);

// Collective: rank 0's string on every rank (unchanged in a single process).
std::string mpi_bcast_from_root(const std::string &value);

// Collective: the smallest value over the ranks (the value itself in a single process).
long long mpi_min(long long value);

}  // namespace hetpu
