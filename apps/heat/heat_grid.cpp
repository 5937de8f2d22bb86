// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/heat/heat_grid.h"

#include <xxhash.h>

#include <utility>

#include "apps/common/splitmix.h"
#include "apps/heat/heat_kernels.h"

namespace hetpu::heat {

BlockRows block_rows(const Geometry &g, uint32_t block)
{
    const uint32_t base = g.rows / g.blocks, extra = g.rows % g.blocks;
    BlockRows b;
    b.count = base + (block < extra ? 1 : 0);
    b.first = block * base + (block < extra ? block : extra);
    return b;
}

float initial_value(uint64_t seed, const Geometry &g, uint32_t row, uint32_t col)
{
    if (row == 0)
        return 4.0f;
    if (col == 0)
        return 3.0f;
    if (row + 1 == g.rows || col + 1 == g.cols)
        return 1.0f;
    const uint64_t index = static_cast<uint64_t>(row) * g.cols + col;
    apps::SplitMix64 rng = apps::SplitMix64::at(seed, index);
    return 1.0f + static_cast<float>(rng.next() >> 40) * 0x1.0p-24f;
}

void initial_block(uint64_t seed, const Geometry &g, uint32_t block, float *out)
{
    const BlockRows b = block_rows(g, block);
    for (uint32_t r = 0; r < b.count; ++r)
        for (uint32_t c = 0; c < g.cols; ++c)
            out[static_cast<std::size_t>(r) * g.cols + c] = initial_value(seed, g, b.first + r, c);
}

void step_block(const float *cur, const float *above, const float *below, const Geometry &g, const BlockRows &b,
                float *out)
{
    for (uint32_t r = 0; r < b.count; ++r)
        for (uint32_t c = 0; c < g.cols; ++c)
            out[static_cast<std::size_t>(r) * g.cols + c] =
                hetpu_heat_step_cell(cur, above, below, b.first, b.count, g.cols, g.rows, r, c);
}

std::vector<float> initial_grid(uint64_t seed, const Geometry &g)
{
    std::vector<float> grid(static_cast<std::size_t>(g.rows) * g.cols);
    for (uint32_t r = 0; r < g.rows; ++r)
        for (uint32_t c = 0; c < g.cols; ++c)
            grid[static_cast<std::size_t>(r) * g.cols + c] = initial_value(seed, g, r, c);
    return grid;
}

// Written apart from step_block on purpose: the plain textbook sweep over the whole grid,
// so that a mistake in the blocks' edge handling shows as a difference.
void reference_sweeps(std::vector<float> &grid, const Geometry &g, uint64_t sweeps)
{
    std::vector<float> next(grid);
    const std::size_t w = g.cols;
    for (uint64_t s = 0; s < sweeps; ++s) {
        for (std::size_t r = 1; r + 1 < g.rows; ++r)
            for (std::size_t c = 1; c + 1 < w; ++c)
                next[r * w + c] = hetpu_heat_cell(grid[(r - 1) * w + c], grid[(r + 1) * w + c], grid[r * w + c - 1],
                                                  grid[r * w + c + 1]);
        std::swap(grid, next);
    }
}

uint64_t grid_digest(const float *cells, std::size_t count) { return XXH3_64bits(cells, count * sizeof(float)); }

}  // namespace hetpu::heat
