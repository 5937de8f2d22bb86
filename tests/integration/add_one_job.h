// SPDX-License-Identifier: LGPL-2.1-or-later
// A divisible job over add_one_codelet (y[i] += 1 on a float vector) for the runner's tests:
// a block writes the job's vector directly (fill_task) or, when the job opts in to copies, a
// private copy of its range (fill_private) that only the kept task's commit copies back. Every
// element then ends at exactly 1 whatever was copied, withdrawn or thrown away.
#pragma once

#include <hetpu/divisible.h>
#include <starpu.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <vector>

struct AddOneJob {
    std::vector<float> y;
    std::mutex mutex;
    std::multiset<uint64_t> committed;  // offsets
    unsigned filled_private = 0, filled_plain = 0;
    struct starpu_codelet *codelet = nullptr;  // add_one_codelet unless a test wraps it
};

// Private outputs allocated and not yet committed or discarded, and those discarded (a
// discarded output does not know its job: process-wide; reset before each test).
extern std::atomic<int> add_one_live_outputs;
extern std::atomic<int> add_one_discarded;

// The job over data.y, `total` zeros; `opt_in`: fill_private, commit and discard set.
hetpu_divisible_job add_one_job(AddOneJob &data, uint64_t total, bool opt_in, const char *name, uint64_t default_block);
