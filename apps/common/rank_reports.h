// SPDX-License-Identifier: LGPL-2.1-or-later
// The app's own exchanges between ranks in a repetition of a multi-rank run (outside its
// divisible jobs: k-means' sums and, under the central planner, its labels; grn's best
// subsets; matmul's verdicts), per rank in the record's rank_reports (app_bytes_sent,
// app_bytes_received), beside what hetpu's runners exchanged for the jobs.
#pragma once

#include <hetpu/mpi.h>

#include <cstdint>
#include <vector>

#include "apps/common/app_record.h"

namespace hetpu::apps {

// What this rank has exchanged through hetpu_mpi_bcast/hetpu_mpi_gather so far.
struct AppBytes {
    uint64_t sent = 0;
    uint64_t received = 0;
};

inline AppBytes app_bytes_now()
{
    AppBytes b;
    hetpu_mpi_app_bytes(&b.sent, &b.received);
    return b;
}

// Collective (every rank, before rank 0 writes its record): every rank's exchanges since
// `since` into t's rank totals on rank 0. Returns 0 or hetpu_mpi_gather's error.
inline int add_app_bytes(MpiTotals &t, const AppBytes &since)
{
    const AppBytes now = app_bytes_now();
    const uint64_t mine[2] = {now.sent - since.sent, now.received - since.received};
    const int size = hetpu_mpi_size();
    if (size <= 1)
        return 0;
    std::vector<uint64_t> all(hetpu_mpi_rank() == 0 ? 2 * static_cast<size_t>(size) : 0);
    if (int rc = hetpu_mpi_gather(mine, sizeof mine, all.data()); rc != 0)
        return rc;
    for (RankTotals &r : t.ranks) {
        if (r.rank < 0 || r.rank >= size || all.empty())
            continue;
        r.app_bytes_sent = all[2 * static_cast<size_t>(r.rank)];
        r.app_bytes_received = all[2 * static_cast<size_t>(r.rank) + 1];
    }
    return 0;
}

}  // namespace hetpu::apps
