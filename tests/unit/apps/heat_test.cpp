// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu-heat's pure core: the split into blocks, one sweep of blocks that exchange edge rows
// against the whole-grid reference, the fixed boundary, the digest, the checkpoint header's
// checks and the command line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "apps/heat/heat_checkpoint_header.h"
#include "apps/heat/heat_grid.h"
#include "apps/heat/heat_kernels.h"
#include "apps/heat/heat_options.h"

using namespace hetpu::heat;

namespace {

bool parse(std::vector<const char *> args, Options &o, std::string &error)
{
    args.insert(args.begin(), "heat");
    return parse_options(static_cast<int>(args.size()), args.data(), o, error);
}

// `sweeps` sweeps of the grid split into g.blocks blocks, each sweep reading its
// neighbours' edge rows as taken after the previous sweep (as the StarPU tasks do).
std::vector<float> blocked_sweeps(uint64_t seed, const Geometry &g, int sweeps)
{
    std::vector<std::vector<float>> blocks(g.blocks);
    for (uint32_t b = 0; b < g.blocks; ++b) {
        blocks[b].resize(block_rows(g, b).cells(g.cols));
        initial_block(seed, g, b, blocks[b].data());
    }
    const std::vector<float> outside(g.cols, -1000.0f);  // never read: a wrong read would show
    for (int s = 0; s < sweeps; ++s) {
        std::vector<std::vector<float>> top(g.blocks), bottom(g.blocks);
        for (uint32_t b = 0; b < g.blocks; ++b) {
            top[b].assign(blocks[b].begin(), blocks[b].begin() + g.cols);
            bottom[b].assign(blocks[b].end() - g.cols, blocks[b].end());
        }
        for (uint32_t b = 0; b < g.blocks; ++b) {
            std::vector<float> out(blocks[b].size());
            step_block(blocks[b].data(), b > 0 ? bottom[b - 1].data() : outside.data(),
                       b + 1 < g.blocks ? top[b + 1].data() : outside.data(), g, block_rows(g, b), out.data());
            blocks[b] = out;
        }
    }
    std::vector<float> grid;
    for (const auto &b : blocks)
        grid.insert(grid.end(), b.begin(), b.end());
    return grid;
}

bool same_bits(const std::vector<float> &a, const std::vector<float> &b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST(HeatGrid, BlocksTileTheRowsLargerFirst)
{
    for (uint32_t rows : {3u, 7u, 64u, 101u})
        for (uint32_t blocks = 1; blocks <= rows && blocks <= 9; ++blocks) {
            const Geometry g{rows, 5, blocks};
            uint32_t next = 0, previous = rows;
            for (uint32_t b = 0; b < blocks; ++b) {
                const BlockRows r = block_rows(g, b);
                EXPECT_EQ(r.first, next) << rows << " rows, block " << b << " of " << blocks;
                EXPECT_GE(r.count, 1u);
                EXPECT_LE(r.count, previous);
                EXPECT_LE(r.count, rows / blocks + 1);
                previous = r.count;
                next += r.count;
            }
            EXPECT_EQ(next, rows);
        }
}

TEST(HeatGrid, InitialStateBoundaryAndExactInterior)
{
    const Geometry g{6, 7, 2};
    const std::vector<float> grid = initial_grid(3, g);
    std::set<float> interior;
    for (uint32_t r = 0; r < g.rows; ++r)
        for (uint32_t c = 0; c < g.cols; ++c) {
            const float v = grid[r * g.cols + c];
            if (r == 0) {
                EXPECT_EQ(v, 4.0f);
            } else if (c == 0) {
                EXPECT_EQ(v, 3.0f);
            } else if (r + 1 == g.rows || c + 1 == g.cols) {
                EXPECT_EQ(v, 1.0f);
            } else {
                EXPECT_GE(v, 1.0f);
                EXPECT_LT(v, 2.0f);
                EXPECT_EQ(v, 1.0f + std::ldexp(std::ldexp(v - 1.0f, 24), -24)) << "not on the 2^-24 grid";
                interior.insert(v);
            }
        }
    EXPECT_GT(interior.size(), 15u) << "the interior should be random";
    EXPECT_FALSE(same_bits(grid, initial_grid(4, g))) << "the seed must change the interior";
}

TEST(HeatGrid, OneSweepByHand)
{
    // 3 x 3: only the centre moves, to the mean of its four neighbours.
    const Geometry g{3, 3, 1};
    std::vector<float> grid = initial_grid(9, g);
    const float centre = grid[4];
    reference_sweeps(grid, g, 1);
    EXPECT_EQ(grid[4], (4.0f + 1.0f + 3.0f + 1.0f) / 4.0f);
    EXPECT_NE(grid[4], centre);
    const std::vector<float> again = blocked_sweeps(9, g, 1);
    EXPECT_TRUE(same_bits(grid, again));
}

TEST(HeatGrid, BlockedSweepsEqualTheWholeGridBitForBit)
{
    for (uint32_t blocks : {1u, 2u, 3u, 5u, 17u}) {
        const Geometry g{17, 13, blocks};
        std::vector<float> ref = initial_grid(11, g);
        reference_sweeps(ref, g, 25);
        EXPECT_TRUE(same_bits(blocked_sweeps(11, g, 25), ref)) << blocks << " blocks";
    }
}

TEST(HeatGrid, BoundaryStaysFixedAndValuesStayInRange)
{
    const Geometry g{12, 9, 3};
    const std::vector<float> start = initial_grid(5, g);
    std::vector<float> grid = start;
    reference_sweeps(grid, g, 200);
    for (uint32_t r = 0; r < g.rows; ++r)
        for (uint32_t c = 0; c < g.cols; ++c) {
            const std::size_t i = r * g.cols + c;
            if (r == 0 || c == 0 || r + 1 == g.rows || c + 1 == g.cols) {
                EXPECT_EQ(grid[i], start[i]) << r << "," << c;
            }
            EXPECT_GE(grid[i], 1.0f);
            EXPECT_LE(grid[i], 4.0f);
        }
    EXPECT_FALSE(same_bits(grid, start));
}

TEST(HeatGrid, DigestSeesOneBit)
{
    std::vector<float> grid = initial_grid(1, Geometry{8, 8, 1});
    const uint64_t d = grid_digest(grid.data(), grid.size());
    EXPECT_EQ(d, grid_digest(grid.data(), grid.size()));
    uint32_t bits;
    std::memcpy(&bits, &grid[27], sizeof bits);
    bits ^= 1;
    std::memcpy(&grid[27], &bits, sizeof bits);
    EXPECT_NE(d, grid_digest(grid.data(), grid.size()));
}

TEST(HeatCheckpointHeader, AcceptsItsOwnRunAndNamesWhatDiffers)
{
    Options o;
    std::string error;
    ASSERT_TRUE(parse({"--rows", "40", "--cols", "30", "--blocks", "4", "--seed", "7"}, o, error)) << error;
    const CheckpointHeader h = header_of(o, 12);
    EXPECT_TRUE(check_header(h, o, 12, error)) << error;
    EXPECT_FALSE(check_header(h, o, 13, error));
    EXPECT_NE(error.find("holds sweep 12"), std::string::npos) << error;
    Options other = o;
    other.blocks = 5;
    EXPECT_FALSE(check_header(h, other, 12, error));
    EXPECT_NE(error.find("--blocks 4, this run has 5"), std::string::npos) << error;
    other = o;
    other.seed = 8;
    EXPECT_FALSE(check_header(h, other, 12, error));
    EXPECT_NE(error.find("--seed"), std::string::npos) << error;
    CheckpointHeader foreign = h;
    foreign.magic[0] = 'x';
    EXPECT_FALSE(check_header(foreign, o, 12, error));
    EXPECT_NE(error.find("not written by hetpu-heat"), std::string::npos) << error;
}

TEST(HeatOptions, DefaultsAndValues)
{
    Options o;
    std::string error;
    ASSERT_TRUE(parse({}, o, error)) << error;
    EXPECT_EQ(o.rows, 1024u);
    EXPECT_EQ(o.cols, 1024u);
    EXPECT_EQ(o.blocks, 8u);
    EXPECT_EQ(o.iterations, 200u);
    EXPECT_EQ(o.checkpoint_every, 0u);
    ASSERT_TRUE(parse({"--rows", "64", "--cols", "32", "--blocks", "64", "--iterations", "9", "--checkpoint-every", "3",
                       "--checkpoint-dir", "/tmp/x", "--verify", "--output", "g.bin"},
                      o, error))
        << error;
    EXPECT_EQ(o.blocks, 64u);
    EXPECT_EQ(o.checkpoint_every, 3u);
    EXPECT_TRUE(o.verify);
    EXPECT_EQ(o.output_path, "g.bin");
    ASSERT_TRUE(parse({"--restart", "--checkpoint-dir", "/tmp/x"}, o, error)) << error;
    EXPECT_TRUE(o.restart);
}

TEST(HeatOptions, BadInputNamesTheProblem)
{
    struct Case {
        std::vector<const char *> args;
        const char *says;
    };
    const Case cases[] = {
        {{"--rows", "2"}, "--rows"},
        {{"--cols", "40000"}, "--cols"},
        {{"--rows", "-5"}, "--rows"},
        {{"--iterations", "0"}, "--iterations"},
        {{"--iterations", "ten"}, "--iterations"},
        {{"--blocks", "0"}, "--blocks"},
        {{"--rows", "10", "--blocks", "11"}, "every block needs a row"},
        {{"--checkpoint-every", "5"}, "needs --checkpoint-dir"},
        {{"--restart"}, "--restart needs --checkpoint-dir"},
        {{"--checkpoint-dir", "/tmp/x"}, "alone does nothing"},
        {{"--checkpoint-every", "0", "--checkpoint-dir", "/tmp/x"}, "--checkpoint-every"},
        {{"--output", ""}, "--output"},
        {{"--frobnicate"}, "frobnicate"},
    };
    for (const Case &c : cases) {
        Options o;
        std::string error;
        EXPECT_FALSE(parse(c.args, o, error)) << c.args[0];
        EXPECT_NE(error.find(c.says), std::string::npos) << "'" << error << "' lacks '" << c.says << "'";
    }
}

TEST(HeatOptions, HelpListsTheCheckpointOptions)
{
    const std::string help = usage("hetpu-heat");
    for (const char *opt : {"--rows", "--cols", "--blocks", "--iterations", "--checkpoint-every", "--checkpoint-dir",
                            "--restart", "--verify", "--json", "--output"})
        EXPECT_NE(help.find(opt), std::string::npos) << opt;
}
