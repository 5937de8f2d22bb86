// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu-heat's grid: its split into blocks of rows, its initial state, one sweep of a block
// given its neighbours' edge rows, the whole-grid reference and the digest of a grid. Pure
// C++: unit-tested without StarPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hetpu::heat {

struct Geometry {
    uint32_t rows = 0, cols = 0, blocks = 0;
};

// Rows [first, first + count) of the grid. Blocks differ by at most one row, the larger
// ones first.
struct BlockRows {
    uint32_t first = 0, count = 0;
    std::size_t cells(uint32_t cols) const { return static_cast<std::size_t>(count) * cols; }
};
BlockRows block_rows(const Geometry &g, uint32_t block);

// The state before the first sweep: the top row at 4, the left column at 3, the other
// boundary cells at 1, the interior uniform in [1, 2) from `seed` (multiples of 2^-24, so
// exact floats). Every later value is a mean of values in [1, 4]: no subnormal ever
// arises, on which devices could differ.
float initial_value(uint64_t seed, const Geometry &g, uint32_t row, uint32_t col);
void initial_block(uint64_t seed, const Geometry &g, uint32_t block, float *out);

// One sweep of a block (heat_kernels.h) from cur into out (count x cols cells each).
// above / below: the rows just outside the block (ignored at the grid's top and bottom).
void step_block(const float *cur, const float *above, const float *below, const Geometry &g, const BlockRows &b,
                float *out);

// The whole grid, row after row, and `sweeps` sweeps of it without blocks: the reference
// --verify compares the blocked run with.
std::vector<float> initial_grid(uint64_t seed, const Geometry &g);
void reference_sweeps(std::vector<float> &grid, const Geometry &g, uint64_t sweeps);

// XXH3-64 of the grid's bytes in row order: equal digests, equal grids.
uint64_t grid_digest(const float *cells, std::size_t count);

}  // namespace hetpu::heat
