// SPDX-License-Identifier: LGPL-2.1-or-later
// What the rest of libhetpu needs to know about an MPI launch started by hetpu_init_mpi().
#pragma once

#include "config.h"
#include "runtime/mpi_gather.h"

#ifdef HETPU_HAVE_MPI
#include <mpi.h>
#endif

namespace hetpu {

// Called by hetpu_shutdown(): under StarPU-MPI, stops StarPU-MPI, which stops StarPU too
// (returns true: do not call starpu_shutdown()); false otherwise. mpi_after_shutdown()
// then finalises MPI when hetpu initialised it.
bool mpi_shutdown_starpu();
void mpi_after_shutdown();

#ifdef HETPU_HAVE_MPI
// A duplicate of MPI_COMM_WORLD reserved for hetpu's control messages, so they can never
// match a receive posted by StarPU-MPI or by the application.
MPI_Comm mpi_control_comm();
#endif

}  // namespace hetpu
