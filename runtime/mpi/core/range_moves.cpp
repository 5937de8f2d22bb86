// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/range_moves.h"

#include <algorithm>

namespace hetpu {

bool may_lend(const Block &back, const Block &share, bool stopped)
{
    return !stopped && back.count > 0 && back.offset >= share.offset &&
           back.offset + back.count <= share.offset + share.count;
}

void BorrowedRanges::add(uint64_t move, int from, const Block &range) { ranges_[move] = BorrowedRange{from, range, 0}; }

uint64_t overlap(const Block &a, const Block &b)
{
    const uint64_t begin = std::max(a.offset, b.offset);
    const uint64_t end = std::min(a.offset + a.count, b.offset + b.count);
    return end > begin ? end - begin : 0;
}

void BorrowedRanges::credit(const std::vector<Block> &homes)
{
    // By the elements each block shares with each range: two ranges borrowed side by side
    // are one range to the cursor, and a block may span both.
    for (const Block &h : homes)
        for (auto &[move, b] : ranges_)
            b.home += overlap(h, b.range);
}

std::vector<uint64_t> BorrowedRanges::ready(bool abandon) const
{
    std::vector<uint64_t> moves;
    for (const auto &[move, b] : ranges_)
        if (b.home >= b.range.count || abandon)
            moves.push_back(move);
    return moves;
}

}  // namespace hetpu
