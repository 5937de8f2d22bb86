// SPDX-License-Identifier: LGPL-2.1-or-later
// hetpu calibrate's pure cores: the stopping rule against hand-computed Student-t
// intervals, options, and the CSV (read back by the profile reader).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sched_policies/pareto/core/profile_csv.h"
#include "tools/calibrate/calibrate_options.h"
#include "tools/calibrate/profile_writer.h"
#include "tools/calibrate/sample_stats.h"
#include "tests/unit/thrown_message.h"

using namespace hetpu;
using namespace hetpu::calibrate;

TEST(SampleStats, HalfWidthIsStudentTTimesStandardError)
{
    SampleSeries s;
    for (double x : {10.0, 12.0, 11.0, 13.0, 9.0})
        s.add(x);
    EXPECT_DOUBLE_EQ(s.mean(), 11.0);
    EXPECT_NEAR(s.stddev(), std::sqrt(2.5), 1e-12);
    // t_{0.975, 4} = 2.776445105 (tables).
    EXPECT_NEAR(s.half_width(0.95), 2.776445105 * std::sqrt(2.5) / std::sqrt(5.0), 1e-8);
    EXPECT_NEAR(s.relative_half_width(0.95), 2.776445105 * std::sqrt(2.5) / std::sqrt(5.0) / 11.0, 1e-8);
    RepetitionRule rule;
    rule.precision = 0.10;  // 0.1776 relative: not precise
    EXPECT_FALSE(s.precise(rule));
    rule.precision = 0.20;
    EXPECT_TRUE(s.precise(rule));
    SampleSeries one;
    one.add(3);
    EXPECT_TRUE(std::isinf(one.half_width(0.95)));
    SampleSeries zeros;
    zeros.add(0);
    zeros.add(0);
    EXPECT_EQ(zeros.relative_half_width(0.95), 0.0);
}

TEST(SampleStats, StopsWhenAllPreciseAfterMinRepsOrAtMaxReps)
{
    RepetitionRule rule;
    rule.min_reps = 3;
    rule.max_reps = 6;
    rule.precision = 0.05;
    SampleSeries steady, noisy;
    steady.add(1.0);
    steady.add(1.0);
    noisy.add(1.0);
    noisy.add(2.0);
    EXPECT_FALSE(should_stop({&steady}, rule));  // below min_reps even though precise
    steady.add(1.0);
    EXPECT_TRUE(should_stop({&steady}, rule));
    noisy.add(1.5);
    EXPECT_FALSE(should_stop({&steady, &noisy}, rule));  // one series still imprecise
    for (int i = 0; i < 3; ++i) {
        noisy.add(1.0 + i);
        steady.add(1.0);
    }
    EXPECT_TRUE(should_stop({&steady, &noisy}, rule));  // max_reps reached
}

TEST(CalibrateOptions, SizesRangesAndErrors)
{
    EXPECT_EQ(parse_sizes("32:128:32,16,64"), (std::vector<uint64_t>{16, 32, 64, 96, 128}));
    EXPECT_THROW_MSG(parse_sizes("0"), std::invalid_argument, "size '0' is not a positive integer");
    EXPECT_THROW_MSG(parse_sizes("64:32:8"), std::invalid_argument,
                     "size range '64:32:8' is not FROM:TO:STEP with 0 < FROM <= TO and STEP > 0");
    EXPECT_THROW_MSG(parse_sizes("1:2"), std::invalid_argument, "size range '1:2' is not FROM:TO:STEP");
    EXPECT_THROW_MSG(parse_sizes("a,b"), std::invalid_argument, "size 'a' is not a positive integer");
    EXPECT_THROW_MSG(parse_sizes("1:100000:1"), std::invalid_argument, "has more than 10000 sizes");
    const char *ok[] = {"--app", "fft2d", "--sizes", "8:32:8", "--precision", "0.05", "--max-reps", "9"};
    const Options o = parse_options(8, ok);
    EXPECT_EQ(o.dim, 1024u);
    EXPECT_DOUBLE_EQ(o.rule.precision, 0.05);
    EXPECT_EQ(o.rule.max_reps, 9u);
    const char *app[] = {"--app", "kmeans", "--sizes", "8"};
    EXPECT_THROW_MSG(parse_options(4, app), CLI::ParseError, "'kmeans' is not an app calibrate knows (matmul, fft2d)");
    const char *reps[] = {"--app", "matmul", "--sizes", "8", "--min-reps", "10", "--max-reps", "5"};
    EXPECT_THROW_MSG(parse_options(8, reps), CLI::ParseError, "--min-reps 10 is larger than --max-reps 5");
    const char *none[] = {"--app", "matmul"};
    EXPECT_THROW_MSG(parse_options(2, none), CLI::ParseError, "--sizes is required");
    const char *help[] = {"--help"};
    EXPECT_TRUE(parse_options(1, help).help);
}

TEST(ProfileWriter, CsvReadsBackWithSourcesAndBasePower)
{
    std::vector<ProfileRow> rows = {{"cpu0", 64, 0.5, 8.75, "model", 5, 0.03, 0.03},
                                    {"opencl0", 64, 0.25, 4.5, "rapl", 5, 0.04, 0.08}};
    const std::string csv = format_profile_csv({"hetpu calibrate --app matmul"}, 15.0, rows);
    const ProfileSet set = parse_profile_csv(csv, "x.csv");
    ASSERT_EQ(set.processors.size(), 2u);
    EXPECT_DOUBLE_EQ(set.base_power_w, 15.0);
    EXPECT_DOUBLE_EQ(set.processors[1].points[0].energy_j, 4.5);
    EXPECT_EQ(set.processors[1].points[0].energy_source, "rapl");
    char dir[] = "/tmp/hetpu-calib-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string path = std::string(dir) + "/profiles/sub/matmul.csv";
    EXPECT_NO_THROW(write_file_atomically(path, csv));
    EXPECT_THROW_MSG(write_file_atomically("/dev/null/matmul.csv", csv), std::runtime_error,
                     "cannot write /dev/null/matmul.csv.tmp.");
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), csv);
    std::remove(path.c_str());
    std::remove((std::string(dir) + "/profiles/sub").c_str());
    std::remove((std::string(dir) + "/profiles").c_str());
    std::remove(dir);
}
