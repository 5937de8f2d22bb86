// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue of one kmeans assignment pass: the points are the divisible elements; each
// block registers its slice of the points, its slice of the labels and a partial result
// of its own, and the partials this process's tasks wrote are reduced in point order once
// the job is done.
//
// On a multi-rank run each rank holds a share of the points (hetpu_mpi_share(), the
// placement's held share): its own planner runs its share, and a range re-shared to a
// faster rank (HETPU_HOLD_BORROWED) gets room here for its points and labels; the points
// come from their owner, the labels go back to it, and the partial sums stay with the rank
// that computed them (the pass's totals are then summed over the ranks by the caller).
#pragma once

#include <hetpu/mpi.h>

#include <vector>

#include "apps/common/app_record.h"
#include "apps/kmeans/kmeans_collective.h"
#include "apps/kmeans/kmeans_data.h"

namespace hetpu::kmeans {

struct PassTotals : apps::JobTotals {
    unsigned jobs = 0;
};

// One pass (StarPU started, codelets_init() done) over this process's share: labels
// (share.local.n) and the partial totals (partial_size(k, d)) of the blocks this process
// ran, for these centroids. block: fixed block size (0: default). The job's report is added
// into acc (and, when report is not null, copied there). Returns 0 or -errno.
int assignment_pass(const PointShare &share, uint32_t k, uint64_t block, const std::vector<double> &centroids,
                    std::vector<int32_t> &labels, std::vector<double> &totals, PassTotals &acc,
                    struct hetpu_divisible_report *report = nullptr);

// The job every pass runs (for hetpu_mpi_share()): n points, the assignment codelet.
struct hetpu_divisible_job pass_job_shape(uint64_t n);

}  // namespace hetpu::kmeans
