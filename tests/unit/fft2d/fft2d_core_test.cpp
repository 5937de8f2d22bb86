// SPDX-License-Identifier: LGPL-2.1-or-later
// fft2d's pure cores: options, the transposition, the verification (accepts the row-column
// algorithm the app runs, rejects a wrong row) and the JSON line (matmul's keys).
#include <gtest/gtest.h>

#include <fftw3.h>
#include <nlohmann/json.hpp>
#include <set>

#include "apps/fft2d/fft2d_batches.h"
#include "apps/fft2d/fft2d_options.h"
#include "apps/fft2d/fft2d_problem.h"
#include "apps/fft2d/fft2d_report.h"
#include "apps/matmul/matmul_report.h"

using namespace hetpu::fft2d;

namespace {

bool parse(std::vector<const char *> args, Options &o, std::string &err)
{
    args.insert(args.begin(), "fft2d");
    return parse_options(static_cast<int>(args.size()), args.data(), o, err);
}

// What the app does, without StarPU: row FFTs, transpose, row FFTs, transpose back.
void row_column_fft(Problem &p)
{
    auto rows_fft = [](Complex *m, uint64_t rows, uint64_t len) {
        auto *z = reinterpret_cast<fftw_complex *>(m);
        fftw_plan plan = fftw_plan_dft_1d(static_cast<int>(len), z, z, FFTW_FORWARD, FFTW_ESTIMATE | FFTW_UNALIGNED);
        for (uint64_t r = 0; r < rows; ++r)
            fftw_execute_dft(plan, z + r * len, z + r * len);
        fftw_destroy_plan(plan);
    };
    rows_fft(p.data.data(), p.rows, p.cols);
    transpose(p.data.data(), p.rows, p.cols, p.scratch.data());
    rows_fft(p.scratch.data(), p.cols, p.rows);
    transpose(p.scratch.data(), p.cols, p.rows, p.data.data());
}

}  // namespace

TEST(Fft2dOptions, SquareByDefaultAndClearErrors)
{
    Options o;
    std::string err;
    ASSERT_TRUE(parse({"-n", "64", "--verify", "--reps", "3"}, o, err)) << err;
    EXPECT_EQ(o.m, 64u);
    EXPECT_EQ(o.n, 64u);
    EXPECT_TRUE(o.verify);
    EXPECT_EQ(o.reps, 3u);
    ASSERT_TRUE(parse({"-m", "32", "-n", "48", "--block", "8"}, o, err)) << err;
    EXPECT_EQ(o.m, 32u);
    EXPECT_EQ(o.n, 48u);
    ASSERT_TRUE(parse({}, o, err)) << err;
    EXPECT_EQ(o.m, kDefaultSize);
    EXPECT_EQ(o.n, kDefaultSize);
    ASSERT_TRUE(parse({"-m40"}, o, err)) << err;
    EXPECT_EQ(o.n, 40u);
    EXPECT_FALSE(parse({"-n", "0"}, o, err));
    EXPECT_NE(err.find("-n: 0 is not a whole number in [1 - 2147483647]"), std::string::npos) << err;
    EXPECT_FALSE(parse({"-n", "16", "--block", "17"}, o, err));
    EXPECT_NE(err.find("--block 17 is larger"), std::string::npos) << err;
    EXPECT_FALSE(parse({"-n", "100000"}, o, err));
    EXPECT_NE(err.find("choose smaller sizes"), std::string::npos) << err;
    EXPECT_FALSE(parse({"-n", "16", "--wat"}, o, err));
    EXPECT_NE(err.find("not expected: --wat"), std::string::npos) << err;
    EXPECT_NE(usage("hetpu-fft2d").find("--verify"), std::string::npos);
}

TEST(Fft2dProblem, TransposeIsExact)
{
    Problem p(37, 70, 3);  // not multiples of the tile
    std::vector<Complex> t(p.input.size()), back(p.input.size());
    transpose(p.input.data(), 37, 70, t.data());
    EXPECT_EQ(t[5 * 37 + 2], p.input[2 * 70 + 5]);
    transpose(t.data(), 70, 37, back.data());
    EXPECT_EQ(back, p.input);
}

TEST(Fft2dProblem, VerifyAcceptsTheRowColumnAlgorithmAndRejectsAWrongRow)
{
    Problem p(24, 40, 7);
    EXPECT_FALSE(verify(p).ok());  // untransformed input
    row_column_fft(p);
    const VerifyResult good = verify(p);
    EXPECT_TRUE(good.ok()) << good.max_abs_error << " > " << good.tolerance;
    EXPECT_LT(good.max_abs_error, good.tolerance);
    // One row left untransformed in the second phase (one column of the result).
    Problem q(24, 40, 7);
    row_column_fft(q);
    q.data[3 * 40 + 11] += Complex(1e-6 * good.max_abs_ref, 0);
    const VerifyResult bad = verify(q);
    EXPECT_FALSE(bad.ok());
    EXPECT_EQ(bad.first_bad, 3u * 40 + 11);
    EXPECT_EQ(bad.bad, 1u);
}

TEST(Fft2dReport, JsonLineHasMatmulsKeys)
{
    Options o;
    o.m = 64;
    o.n = 32;
    hetpu::apps::AppRecord r;
    r.policy = "hepopta";
    r.planner = "hepopta";
    r.makespan_s = 0.5;
    r.verified = hetpu::apps::Verified::Passed;
    r.workers.push_back({0, "CPU", "CPU 0", 1, 64, 0.3, 0.0});
    add_problem(r, o);
    const nlohmann::json j = nlohmann::json::parse(hetpu::apps::json_line(r));
    hetpu::apps::AppRecord mm;
    mm.workers.push_back({});
    hetpu::matmul::Options mo;
    hetpu::matmul::add_problem(mm, mo);
    const nlohmann::json jm = nlohmann::json::parse(hetpu::apps::json_line(mm));
    std::set<std::string> keys, mkeys, wkeys, mwkeys;
    for (auto it = j.begin(); it != j.end(); ++it)
        keys.insert(it.key());
    for (auto it = jm.begin(); it != jm.end(); ++it)
        mkeys.insert(it.key());
    for (auto it = j["workers"][0].begin(); it != j["workers"][0].end(); ++it)
        wkeys.insert(it.key());
    for (auto it = jm["workers"][0].begin(); it != jm["workers"][0].end(); ++it)
        mwkeys.insert(it.key());
    EXPECT_EQ(keys, mkeys);
    EXPECT_EQ(wkeys, mwkeys);
    EXPECT_EQ(j["app"], "fft2d");
    EXPECT_EQ(j["verified"], true);
    EXPECT_TRUE(j["k"].is_null());
    EXPECT_NEAR(j["gflops"].get<double>(), 5.0 * 2048 * 11 / 0.5 * 1e-9, 1e-12);
    EXPECT_NE(summary(r, o, 1).find("fft2d 64 x 32"), std::string::npos);
}

TEST(Fft2dBatches, RowsAreCutIntoPowersOfTwoWithinTheLargestBatch)
{
    EXPECT_EQ(row_batches(0, 256), (std::vector<uint64_t>{}));
    EXPECT_EQ(row_batches(1, 256), (std::vector<uint64_t>{1}));
    EXPECT_EQ(row_batches(256, 256), (std::vector<uint64_t>{256}));
    EXPECT_EQ(row_batches(300, 256), (std::vector<uint64_t>{256, 32, 8, 4}));
    EXPECT_EQ(row_batches(1000, 256), (std::vector<uint64_t>{256, 256, 256, 128, 64, 32, 8}));
    EXPECT_EQ(row_batches(7, 300), (std::vector<uint64_t>{4, 2, 1})) << "a cap that is no power of two: 256";
    EXPECT_EQ(row_batches(5, 1), (std::vector<uint64_t>{1, 1, 1, 1, 1}));
    // Every row once, and never more than log2(max_batch) + 1 batch sizes over all blocks.
    std::set<uint64_t> sizes;
    for (uint64_t rows = 1; rows <= 5000; ++rows) {
        uint64_t sum = 0;
        for (uint64_t b : row_batches(rows, 256)) {
            sum += b;
            sizes.insert(b);
        }
        ASSERT_EQ(sum, rows);
    }
    EXPECT_EQ(sizes.size(), 9u);
}
