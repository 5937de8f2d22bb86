// SPDX-License-Identifier: LGPL-2.1-or-later
// What the rest of libhetpu needs to know about an MPI launch started by hetpu_init_mpi().
#pragma once

#include "config.h"

#include <string>

#include "runtime/mpi/mpi_gather.h"

#ifdef HETPU_HAVE_MPI
#include <mpi.h>
#endif

namespace hetpu {

// Called by hetpu_shutdown(): under StarPU-MPI, stops StarPU-MPI (collective: its barrier
// waits for every rank) and leaves StarPU to starpu_shutdown(); mpi_after_shutdown() then
// finalises MPI when hetpu initialised it.
void mpi_stop_starpu_mpi();
void mpi_after_shutdown();

// Collective: 0 when every rank's job signature (key=value tokens; see hetpu_mpi_same_job)
// equals rank 0's, else -EINVAL on every rank, rank 0 naming the first differing rank and
// option. 0 in a single process.
int same_job_everywhere(const std::string &what, const std::string &signature);

#ifdef HETPU_HAVE_MPI
// A duplicate of MPI_COMM_WORLD reserved for hetpu's control messages, so they can never
// match a receive posted by StarPU-MPI or by the application.
MPI_Comm mpi_control_comm();
#endif

}  // namespace hetpu
