// SPDX-License-Identifier: LGPL-2.1-or-later
// Variable-size arena allocator for one cache tier (host memory, GPU memory).
//
// Checkpoint regions have arbitrary sizes, so a tier is one contiguous byte range handed out
// best-fit with coalescing instead of fixed slots: a 10 MiB region never wastes a 64 MiB
// slot, and freed neighbours merge back into one block so large regions fit again. The arena
// only hands out offsets; the owner maps them onto its memory.
//
// Incremental initialisation: an arena may start with only part of its capacity usable
// (grow_usable() extends it as a background thread touches pages), so checkpoints taken
// before the cache is ready use the part that is ready instead of waiting.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <vector>

namespace hetpu::ckpt {

class Arena {
public:
    // capacity: total bytes; usable: bytes usable now (the rest arrives through grow_usable);
    // alignment: every offset and every block size is a multiple of it (power of two).
    Arena(std::size_t capacity, std::size_t usable, std::size_t alignment = 64);

    // Best-fit: the smallest free block that holds `bytes` (ties: lowest offset). Returns the
    // offset, or nothing when no single free block is large enough (fragmented or full).
    std::optional<std::size_t> allocate(std::size_t bytes);
    // Returns a block obtained from allocate(); neighbours that are free merge with it.
    // Throws std::invalid_argument for an offset that is not an allocated block.
    void release(std::size_t offset);
    // Makes [usable(), new_usable) free (coalescing with a free block ending at usable()).
    void grow_usable(std::size_t new_usable);

    std::size_t capacity() const { return capacity_; }
    std::size_t usable() const { return usable_; }
    std::size_t free_bytes() const { return free_bytes_; }
    std::size_t largest_free_block() const;
    std::size_t rounded(std::size_t bytes) const;
    // Size of an allocated block (the rounded request); throws for an unknown offset.
    std::size_t block_size(std::size_t offset) const;

    struct Block {
        std::size_t offset, size;
        bool free;
    };
    // Every block below usable(), in address order (for eviction windows and tests).
    std::vector<Block> layout() const;

private:
    void insert_free(std::size_t offset, std::size_t size);
    void erase_free(std::size_t offset);
    // Frees [start, start + size), merged with a free block that ends at start.
    void insert_free_after_left_neighbour(std::size_t start, std::size_t size);

    std::size_t capacity_, usable_, alignment_, free_bytes_ = 0;
    std::map<std::size_t, std::size_t> free_by_offset_;     // offset -> size
    std::multimap<std::size_t, std::size_t> free_by_size_;  // size -> offset
    std::map<std::size_t, std::size_t> used_;               // offset -> size
};

}  // namespace hetpu::ckpt
