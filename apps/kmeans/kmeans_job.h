// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue of one kmeans assignment pass: the points are the divisible elements; each
// block registers its slice of the points, its slice of the labels and a partial result
// of its own, and the partials are reduced in point order once the job is done.
#pragma once

#include <hetpu/divisible.h>

#include <vector>

#include "apps/common/app_record.h"
#include "apps/kmeans/kmeans_data.h"

namespace hetpu::kmeans {

struct PassTotals : apps::JobTotals {
    unsigned jobs = 0;
};

// One pass (StarPU started, codelets_init() done): labels (n) and totals
// (partial_size(k, d)) for these centroids. block: fixed block size (0: default).
// The job's report is added into acc. Returns 0 or -errno.
int assignment_pass(const Points &p, uint32_t k, uint64_t block, const std::vector<double> &centroids,
                    std::vector<int32_t> &labels, std::vector<double> &totals, PassTotals &acc);

}  // namespace hetpu::kmeans
