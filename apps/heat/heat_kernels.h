// SPDX-License-Identifier: LGPL-2.1-or-later
// The arithmetic of hetpu-heat's stencil, shared by the CPU core (heat_grid.cpp), the host
// reference and the CUDA kernel (the OpenCL source in heat_opencl.cpp spells the same
// formula). One Jacobi sweep of the Laplace equation, which is also an explicit step of the
// heat equation with the largest stable ratio (1/4): a cell becomes the mean of its four
// neighbours. Two additions and a multiplication by 0.25 (exact): no multiply-add that a
// compiler could contract, so every device computes the same bits.
#pragma once

#include <stdint.h>

#ifdef __CUDACC__
#define HETPU_HEAT_HD __host__ __device__
#else
#define HETPU_HEAT_HD
#endif

static inline HETPU_HEAT_HD float hetpu_heat_cell(float up, float down, float left, float right)
{
    return ((up + down) + (left + right)) * 0.25f;
}

// Cell (r, c) of a block of `count` rows of `cols` cells after one sweep. The block's row r
// is row first + r of a grid of `rows` rows; above / below: the rows just outside the block
// (the neighbours' edges). The grid's outer rows and columns are fixed (the boundary).
static inline HETPU_HEAT_HD float hetpu_heat_step_cell(const float *cur, const float *above, const float *below,
                                                       uint32_t first, uint32_t count, uint32_t cols, uint32_t rows,
                                                       uint32_t r, uint32_t c)
{
    const uint64_t at = static_cast<uint64_t>(r) * cols + c;
    const uint32_t g = first + r;
    if (g == 0 || g + 1 == rows || c == 0 || c + 1 == cols)
        return cur[at];
    const float up = r == 0 ? above[c] : cur[at - cols];
    const float down = r + 1 == count ? below[c] : cur[at + cols];
    return hetpu_heat_cell(up, down, cur[at - 1], cur[at + 1]);
}

// The argument of a sweep task (every implementation reads this layout): the block's rows
// and the grid's size.
struct hetpu_heat_args {
    uint32_t first, count, cols, rows;
};
