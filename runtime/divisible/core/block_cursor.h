// SPDX-License-Identifier: LGPL-2.1-or-later
// Cutting a divisible range [0, total) into consecutive blocks that respect the job's
// granule and minimum block size. Pure C++, no StarPU.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace hetpu {

struct BlockRules {
    uint64_t total = 0;
    uint64_t granule = 1;
    uint64_t min_block = 1;
    // The job's label (hetpu_divisible_job.name, "" if none): planners that keep per-job
    // data, such as the calibrated profiles hepopta reads, find it by this name.
    std::string job_name = {};
    // What StarPU's calibrated performance model of the job's codelet expects a block of
    // `count` elements to take on a StarPU worker, in seconds (NaN: not calibrated for that
    // worker and size), and the block sizes StarPU may have calibrated: the fixed blocks a
    // built-in policy (dmda) runs the job in. Set by a single-process runner, only to be
    // called while the planner is built; empty elsewhere. PLB-HAC starts from it when it has
    // no models of its own (plbhac_codelet_start.h).
    std::function<double(int worker, uint64_t count)> codelet_expected_s = {};
    std::vector<uint64_t> calibrated_sizes = {};
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

// The elements not yet handed out, as ranges of the job, taken front first. A single
// process has one range, [0, total). On a multi-rank run a rank's cursor starts with its
// share and changes with re-sharing: a range lent by another rank is added (add_front: it
// runs first, so its results go home early) and the unstarted tail of the rank's own
// share can be handed to another rank (take_tail).
class BlockCursor {
public:
    explicit BlockCursor(const BlockRules &rules);
    // Only [first, first + count) of the job (count may be 0: nothing yet).
    BlockCursor(const BlockRules &rules, uint64_t first, uint64_t count);

    // The next block of about `wanted` elements of the front range: rounded down to a
    // granule multiple, raised to min_block, capped at what the range holds. If what would
    // remain of the range afterwards is smaller than min_block it is absorbed into this
    // block, so the job never ends with a block too small to be worth a task.
    Block take(uint64_t wanted);

    // The last `wanted` elements of the back range (at least min_block, starting on a
    // granule boundary; the whole range when less than min_block would be left), removed
    // from the cursor. count 0 when nothing is left.
    Block take_tail(uint64_t wanted);
    // The same from the last range `eligible` accepts (a rank lends only ranges of its own
    // share, not one it borrowed): that range is moved to the back first, so what stays
    // ahead of it runs first. count 0 when no range is eligible.
    Block take_tail(uint64_t wanted, const std::function<bool(const Block &)> &eligible);

    // take() from the smallest range that holds `wanted` (the largest when none does), so
    // that fragments given back early are used up early instead of ending the job.
    Block take_best_fit(uint64_t wanted);

    // A range taken earlier and not run (a revoked promise): merged with a range it touches,
    // else put in front so that it is reused before the rest.
    void give_back(const Block &b);

    void add_front(uint64_t offset, uint64_t count);
    void add_back(uint64_t offset, uint64_t count);

    // The back range (count 0 when exhausted), to see what take_tail would cut from.
    Block back() const;

    uint64_t remaining() const { return remaining_; }
    bool exhausted() const { return remaining_ == 0; }
    const BlockRules &rules() const { return rules_; }

    size_t ranges() const { return ranges_.size(); }

private:
    BlockRules rules_;
    std::deque<Block> ranges_;
    uint64_t remaining_ = 0;
};

}  // namespace hetpu
