// SPDX-License-Identifier: LGPL-2.1-or-later
// Cutting a divisible range [0, total) into consecutive blocks that respect the job's
// granule and minimum block size. Pure C++, no StarPU.
#pragma once

#include <cstdint>
#include <string>

namespace hetpu {

struct BlockRules {
    uint64_t total = 0;
    uint64_t granule = 1;
    uint64_t min_block = 1;
    // The job's label (hetpu_divisible_job.name, "" if none): planners that keep per-job
    // data, such as the calibrated profiles hepopta reads, find it by this name.
    std::string job_name = {};
};

struct Block {
    uint64_t offset = 0;
    uint64_t count = 0;  // 0: nothing left
};

// Fills in the defaults of a job description (granule 0 -> 1, min_block 0 -> granule,
// min_block rounded up to a granule multiple). Throws std::invalid_argument naming what is
// wrong with it.
void normalize_block_rules(BlockRules &rules);

// Fixed block size used when no planner chooses: requested (HETPU_BLOCK or the job's
// default) if nonzero, else total / (4 * workers); then made valid for the rules.
// Throws std::invalid_argument for a requested block larger than the whole problem: it
// almost always means the user mixed up units.
uint64_t choose_fixed_block(const BlockRules &rules, uint64_t requested, unsigned workers);

class BlockCursor {
public:
    explicit BlockCursor(const BlockRules &rules) : rules_(rules) {}

    // The next block of about `wanted` elements: rounded down to a granule multiple,
    // raised to min_block, capped at what remains. If what would remain afterwards is
    // smaller than min_block it is absorbed into this block, so the job never ends with a
    // block too small to be worth a task.
    Block take(uint64_t wanted);

    uint64_t remaining() const { return rules_.total - next_; }
    bool exhausted() const { return next_ >= rules_.total; }
    const BlockRules &rules() const { return rules_; }

private:
    BlockRules rules_;
    uint64_t next_ = 0;
};

}  // namespace hetpu
