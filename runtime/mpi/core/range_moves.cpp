// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/range_moves.h"

namespace hetpu {

bool may_lend(const Block &back, const Block &share, bool stopped)
{
    return !stopped && back.count > 0 && back.offset >= share.offset &&
           back.offset + back.count <= share.offset + share.count;
}

void BorrowedRanges::add(uint64_t move, int from, const Block &range) { ranges_[move] = BorrowedRange{from, range, 0}; }

void BorrowedRanges::credit(const std::vector<Block> &homes)
{
    for (const Block &h : homes)
        for (auto &[move, b] : ranges_)
            if (h.offset >= b.range.offset && h.offset < b.range.offset + b.range.count)
                b.home += h.count;
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
