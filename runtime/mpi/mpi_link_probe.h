// SPDX-License-Identifier: LGPL-2.1-or-later
// The link probe of a multi-rank run (core/link_probe.h for the method): collective,
// a few tenths of a second at most, before the job starts.
#pragma once

#include "config.h"  // HETPU_HAVE_MPI

#ifdef HETPU_HAVE_MPI

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "runtime/mpi/core/node_shares.h"

namespace hetpu {

struct ProbedLinks {
    std::vector<NodeLink> links;  // per rank, on rank 0 (empty elsewhere)
    uint64_t bytes_sent = 0;      // this rank's probe traffic, counted as control bytes
    uint64_t bytes_received = 0;
};

// Collective on `comm`, which must carry no other traffic meanwhile: every rank's own link,
// measured against its ring neighbours, the first time; later calls return the same links
// and no bytes. Under HETPU_MPI_LINK_PROBE=0 nothing is measured and
// every rank has the default NodeLink.
ProbedLinks probe_links(MPI_Comm comm);

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
