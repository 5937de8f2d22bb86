// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/divisible/core/block_cursor.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>

namespace hetpu {

namespace {
uint64_t round_up(uint64_t value, uint64_t granule) { return (value + granule - 1) / granule * granule; }
}  // namespace

void normalize_block_rules(BlockRules &rules)
{
    if (rules.total == 0)
        throw std::invalid_argument("the job's total size is 0; give the number of elements to process");
    if (rules.granule == 0)
        rules.granule = 1;
    if (rules.granule > rules.total)
        throw std::invalid_argument("the granule (" + std::to_string(rules.granule) + ") is larger than the job (" +
                                    std::to_string(rules.total) + " elements)");
    if (rules.min_block == 0)
        rules.min_block = rules.granule;
    rules.min_block = round_up(rules.min_block, rules.granule);
    if (rules.min_block > rules.total)
        rules.min_block = rules.total;
}

uint64_t choose_fixed_block(const BlockRules &rules, uint64_t requested, unsigned workers)
{
    if (requested > rules.total)
        throw std::invalid_argument("block size " + std::to_string(requested) + " is larger than the problem (" +
                                    std::to_string(rules.total) + " elements); choose a block of at most " +
                                    std::to_string(rules.total));
    uint64_t b = requested;
    if (b == 0)
        b = rules.total / (4 * std::max(1u, workers));
    b = b / rules.granule * rules.granule;
    return std::min(std::max(b, rules.min_block), rules.total);
}

BlockCursor::BlockCursor(const BlockRules &rules) : BlockCursor(rules, 0, rules.total) {}

BlockCursor::BlockCursor(const BlockRules &rules, uint64_t first, uint64_t count) : rules_(rules)
{
    add_back(first, count);
}

void BlockCursor::add_front(uint64_t offset, uint64_t count)
{
    if (count == 0)
        return;
    ranges_.push_front({offset, count});
    remaining_ += count;
}

void BlockCursor::add_back(uint64_t offset, uint64_t count)
{
    if (count == 0)
        return;
    ranges_.push_back({offset, count});
    remaining_ += count;
}

Block BlockCursor::back() const { return ranges_.empty() ? Block{} : ranges_.back(); }

Block BlockCursor::take(uint64_t wanted)
{
    Block block;
    if (exhausted() || wanted == 0)
        return block;
    Block &front = ranges_.front();
    const uint64_t left = front.count;
    uint64_t count = wanted / rules_.granule * rules_.granule;
    count = std::max(count, rules_.min_block);
    count = std::min(count, left);
    if (left - count < rules_.min_block)
        count = left;
    block.offset = front.offset;
    block.count = count;
    front.offset += count;
    front.count -= count;
    remaining_ -= count;
    if (front.count == 0)
        ranges_.pop_front();
    return block;
}

Block BlockCursor::take_tail(uint64_t wanted)
{
    Block block;
    if (exhausted() || wanted == 0)
        return block;
    Block &last = ranges_.back();
    const uint64_t end = last.offset + last.count;
    uint64_t count = std::min(std::max(wanted, rules_.min_block), last.count);
    // Start on a granule boundary of the job (the job's last element may end off one).
    uint64_t start = (end - count) / rules_.granule * rules_.granule;
    start = std::max(start, last.offset);
    if (start - last.offset < rules_.min_block)
        start = last.offset;
    block.offset = start;
    block.count = end - start;
    last.count -= block.count;
    remaining_ -= block.count;
    if (last.count == 0)
        ranges_.pop_back();
    return block;
}

Block BlockCursor::take_tail(uint64_t wanted, const std::function<bool(const Block &)> &eligible)
{
    for (size_t i = ranges_.size(); i-- > 0;) {
        if (!eligible(ranges_[i]))
            continue;
        if (i + 1 != ranges_.size()) {
            const Block r = ranges_[i];
            ranges_.erase(ranges_.begin() + static_cast<std::ptrdiff_t>(i));
            ranges_.push_back(r);
        }
        return take_tail(wanted);
    }
    return Block{};
}

Block BlockCursor::take_best_fit(uint64_t wanted)
{
    if (ranges_.size() > 1) {
        size_t best = 0;
        bool fits = false;
        for (size_t i = 0; i < ranges_.size(); ++i) {
            const uint64_t c = ranges_[i].count;
            const bool f = c >= wanted;
            if ((f && (!fits || c < ranges_[best].count)) || (!f && !fits && c > ranges_[best].count))
                best = i;
            fits = fits || f;
        }
        if (best != 0)
            std::swap(ranges_[0], ranges_[best]);
    }
    return take(wanted);
}

void BlockCursor::give_back(const Block &b)
{
    if (b.count == 0)
        return;
    remaining_ += b.count;
    Block merged = b;
    size_t keep = ranges_.size();  // the first range it touches takes the merged range's place
    for (size_t i = 0; i < ranges_.size();) {
        const Block r = ranges_[i];
        if (r.offset + r.count != merged.offset && merged.offset + merged.count != r.offset) {
            ++i;
            continue;
        }
        merged.offset = std::min(merged.offset, r.offset);
        merged.count += r.count;
        if (keep == ranges_.size()) {
            keep = i++;
        } else {
            ranges_.erase(ranges_.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }
    if (keep < ranges_.size())
        ranges_[keep] = merged;
    else
        ranges_.push_front(merged);
}

}  // namespace hetpu
