// SPDX-License-Identifier: LGPL-2.1-or-later
// StarPU glue of one grn search: the discretised data and tables are registered once
// (read-only, copied to each device once), each block of candidate subsets gets an output
// buffer of its own, and the blocks' outputs are merged once the job is done.
#pragma once

#include <hetpu/divisible.h>

#include <string>
#include <vector>

#include "apps/common/app_record.h"
#include "apps/grn/grn_search.h"

namespace hetpu::grn {

struct SearchRun : apps::JobTotals {
    std::vector<Best> best;  // per target
};

// StarPU started and codelets_init() done. block: fixed block size (0: default).
int run_search(const SearchInput &in, uint64_t block, SearchRun &out);

}  // namespace hetpu::grn
