// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/arena.h"

#include <stdexcept>
#include <string>

namespace hetpu::ckpt {

Arena::Arena(std::size_t capacity, std::size_t usable, std::size_t alignment)
    : capacity_(capacity), usable_(0), alignment_(alignment)
{
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        throw std::invalid_argument("arena alignment must be a power of two");
    capacity_ -= capacity_ % alignment_;
    grow_usable(usable);
}

std::size_t Arena::rounded(std::size_t bytes) const
{
    if (bytes == 0)
        bytes = 1;  // a zero-byte region still needs a distinct offset
    return (bytes + alignment_ - 1) / alignment_ * alignment_;
}

void Arena::insert_free(std::size_t offset, std::size_t size)
{
    free_by_offset_.emplace(offset, size);
    free_by_size_.emplace(size, offset);
    free_bytes_ += size;
}

void Arena::erase_free(std::size_t offset)
{
    auto it = free_by_offset_.find(offset);
    auto range = free_by_size_.equal_range(it->second);
    for (auto s = range.first; s != range.second; ++s)
        if (s->second == offset) {
            free_by_size_.erase(s);
            break;
        }
    free_bytes_ -= it->second;
    free_by_offset_.erase(it);
}

std::optional<std::size_t> Arena::allocate(std::size_t bytes)
{
    const std::size_t need = rounded(bytes);
    // lower_bound on size gives the best fit; among equal sizes multimap keeps insertion
    // order, so pick the lowest offset explicitly to keep layouts deterministic.
    auto it = free_by_size_.lower_bound(need);
    if (it == free_by_size_.end())
        return std::nullopt;
    auto best = it;
    for (auto s = it; s != free_by_size_.end() && s->first == it->first; ++s)
        if (s->second < best->second)
            best = s;
    const std::size_t offset = best->second, size = best->first;
    erase_free(offset);
    if (size > need)
        insert_free(offset + need, size - need);
    used_.emplace(offset, need);
    return offset;
}

void Arena::release(std::size_t offset)
{
    auto it = used_.find(offset);
    if (it == used_.end())
        throw std::invalid_argument("arena release of offset " + std::to_string(offset) +
                                    " that is not an allocated block");
    std::size_t start = offset, size = it->second;
    used_.erase(it);
    auto next = free_by_offset_.find(start + size);
    if (next != free_by_offset_.end()) {
        size += next->second;
        erase_free(next->first);
    }
    insert_free_after_left_neighbour(start, size);
}

void Arena::insert_free_after_left_neighbour(std::size_t start, std::size_t size)
{
    auto prev = free_by_offset_.lower_bound(start);
    if (prev != free_by_offset_.begin()) {
        --prev;
        if (prev->first + prev->second == start) {
            start = prev->first;
            size += prev->second;
            erase_free(prev->first);
        }
    }
    insert_free(start, size);
}

void Arena::grow_usable(std::size_t new_usable)
{
    new_usable -= new_usable % alignment_;
    if (new_usable > capacity_)
        new_usable = capacity_;
    if (new_usable <= usable_)
        return;
    std::size_t start = usable_, size = new_usable - usable_;
    usable_ = new_usable;
    insert_free_after_left_neighbour(start, size);
}

std::size_t Arena::largest_free_block() const { return free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first; }

std::size_t Arena::block_size(std::size_t offset) const
{
    auto it = used_.find(offset);
    if (it == used_.end())
        throw std::invalid_argument("arena: unknown block offset");
    return it->second;
}

std::vector<Arena::Block> Arena::layout() const
{
    std::vector<Block> out;
    auto f = free_by_offset_.begin();
    auto u = used_.begin();
    while (f != free_by_offset_.end() || u != used_.end()) {
        if (u == used_.end() || (f != free_by_offset_.end() && f->first < u->first)) {
            out.push_back({f->first, f->second, true});
            ++f;
        } else {
            out.push_back({u->first, u->second, false});
            ++u;
        }
    }
    return out;
}

}  // namespace hetpu::ckpt
