// SPDX-License-Identifier: LGPL-2.1-or-later
// What a rank of a per-node multi-rank run decides about the ranges that move between
// ranks: which range it may lend (lender), and when a range it borrowed has all its
// results home and goes back to its owner (borrower). Pure C++: the StarPU-MPI glue
// (runtime/mpi/owned_lender.cpp, owned_borrower.cpp) moves the data.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "runtime/divisible/core/block_cursor.h"

namespace hetpu {

// Whether the unstarted range at the back of the rank's work may be lent: only the rank's
// own share is, and nothing once the job stops (a borrowed range goes back to its owner).
bool may_lend(const Block &back, const Block &share, bool stopped);

// Elements a and b have in common.
uint64_t overlap(const Block &a, const Block &b);

struct BorrowedRange {
    int from = -1;  // the owner, who gets the results back
    Block range;
    uint64_t home = 0;  // elements whose results are back in main memory
};

// The ranges a rank runs for their owners, by move.
class BorrowedRanges {
public:
    void add(uint64_t move, int from, const Block &range);
    // Blocks whose results are home, credited to the borrowed ranges they overlap.
    void credit(const std::vector<Block> &homes);
    // The moves whose ranges go back now: all of whose results are home, or every one
    // when `abandon` (a failed job: the owner's wait must end, whatever they hold).
    std::vector<uint64_t> ready(bool abandon) const;
    const BorrowedRange &at(uint64_t move) const { return ranges_.at(move); }
    void erase(uint64_t move) { ranges_.erase(move); }
    bool empty() const { return ranges_.empty(); }

private:
    std::map<uint64_t, BorrowedRange> ranges_;
};

}  // namespace hetpu
