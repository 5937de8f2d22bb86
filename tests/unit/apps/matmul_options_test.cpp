// SPDX-License-Identifier: LGPL-2.1-or-later
// The matmul command line: valid forms parse to the right values, and every bad input is
// rejected with a message that names the offending option or value.
#include "apps/matmul/matmul_options.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace {

using hetpu::matmul::Options;
using hetpu::matmul::Precision;

struct Parsed {
    bool ok;
    Options options;
    std::string error;
};

Parsed parse(std::initializer_list<const char *> args)
{
    std::vector<const char *> argv{"matmul"};
    argv.insert(argv.end(), args.begin(), args.end());
    Parsed p;
    p.ok = hetpu::matmul::parse_options(static_cast<int>(argv.size()), argv.data(), p.options, p.error);
    return p;
}

void expect_rejected(std::initializer_list<const char *> args, std::initializer_list<const char *> mentions)
{
    Parsed p = parse(args);
    std::string cmd;
    for (const char *a : args)
        cmd += std::string(" ") + a;
    ASSERT_FALSE(p.ok) << "accepted:" << cmd;
    EXPECT_FALSE(p.error.empty()) << cmd;
    for (const char *m : mentions)
        EXPECT_NE(p.error.find(m), std::string::npos) << "message for" << cmd << " lacks '" << m << "': " << p.error;
}

}  // namespace

TEST(MatmulOptions, SquareDefaults)
{
    Parsed p = parse({"-n", "1024"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.m, 1024u);
    EXPECT_EQ(p.options.n, 1024u);
    EXPECT_EQ(p.options.k, 1024u);
    EXPECT_EQ(p.options.precision, Precision::Double);
    EXPECT_EQ(p.options.block, 0u);
    EXPECT_EQ(p.options.reps, 1u);
    EXPECT_FALSE(p.options.verify);
    EXPECT_TRUE(p.options.json_path.empty());
    EXPECT_FALSE(p.options.help);
    EXPECT_EQ(p.options.clblast_min_indirect, hetpu::matmul::kDefaultClblastMinIndirect);
    EXPECT_EQ(p.options.granule, hetpu::matmul::kDefaultGranule);
}

TEST(MatmulOptions, ClblastMinIndirectSizeIsAnOption)
{
    Parsed p = parse({"-n", "64", "--clblast-min-indirect", "0"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.clblast_min_indirect, 0u) << "0 leaves the choice to CLBlast";
    p = parse({"-n", "64", "--clblast-min-indirect", "384"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.clblast_min_indirect, 384u);
    expect_rejected({"-n", "64", "--clblast-min-indirect", "-1"}, {"--clblast-min-indirect"});
    expect_rejected({"-n", "64", "--clblast-min-indirect", "big"}, {"--clblast-min-indirect", "big"});
}

TEST(MatmulOptions, BlocksAreWholeKernelTilesWhenTheJobHasEnoughOfThem)
{
    const uint64_t g = hetpu::matmul::kDefaultGranule;
    Parsed p = parse({"-n", "3072"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.granule, g) << "3072 columns are 96 tiles";
    p = parse({"-n", std::to_string(g * g - 1).c_str()});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.granule, 1u) << "fewer tiles than the granule: blocks of any width, for balance";
    p = parse({"-n", "3072", "--block", "100"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.granule, 1u) << "a --block that is no multiple of the tile keeps its width";
    p = parse({"-n", "3072", "--block", "256"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.granule, g);
    p = parse({"-n", "3072", "--granule", "1"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.granule, 1u) << "--granule 1: any width";
    p = parse({"-n", "100", "--granule", "64", "--block", "64"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.granule, 64u);
    expect_rejected({"-n", "3072", "--granule", "0"}, {"--granule", "0"});
    expect_rejected({"-n", "100", "--granule", "128"}, {"--granule", "128", "larger than n = 100"});
    expect_rejected({"-n", "3072", "--granule", "64", "--block", "100"}, {"--block 100", "--granule 64", "128"});
}

TEST(MatmulOptions, RectangularAndEveryOption)
{
    Parsed p = parse({"-m", "300", "-n", "200", "-k", "100", "--precision", "single", "--block", "50", "--reps", "3",
                      "--verify", "--json", "out.jsonl", "--seed", "7"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.m, 300u);
    EXPECT_EQ(p.options.n, 200u);
    EXPECT_EQ(p.options.k, 100u);
    EXPECT_EQ(p.options.precision, Precision::Single);
    EXPECT_EQ(p.options.block, 50u);
    EXPECT_EQ(p.options.reps, 3u);
    EXPECT_TRUE(p.options.verify);
    EXPECT_EQ(p.options.json_path, "out.jsonl");
    EXPECT_EQ(p.options.seed, 7u);
}

TEST(MatmulOptions, EqualsFormAndPartialSizes)
{
    Parsed p = parse({"-n", "64", "-k", "8", "--precision=double", "--block=64", "--reps=2"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.m, 64u);  // m defaults to n
    EXPECT_EQ(p.options.k, 8u);
    EXPECT_EQ(p.options.block, 64u);  // block == n is allowed: one block
    EXPECT_EQ(p.options.reps, 2u);
}

TEST(MatmulOptions, NoArgumentsIsTheDefaultProblem)
{
    Parsed p = parse({});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.n, hetpu::matmul::kDefaultSize);
    EXPECT_EQ(p.options.m, hetpu::matmul::kDefaultSize);
    EXPECT_EQ(p.options.k, hetpu::matmul::kDefaultSize);
    p = parse({"-m", "8", "-k", "4"});  // n alone keeps its default
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.m, 8u);
    EXPECT_EQ(p.options.n, hetpu::matmul::kDefaultSize);
    EXPECT_EQ(p.options.k, 4u);
}

TEST(MatmulOptions, HelpNeedsNoSize)
{
    for (const char *h : {"-h", "--help"}) {
        Parsed p = parse({h});
        ASSERT_TRUE(p.ok) << p.error;
        EXPECT_TRUE(p.options.help);
    }
    const std::string usage = hetpu::matmul::usage("/build/apps/matmul/.libs/lt-hetpu-matmul");
    EXPECT_NE(usage.find("Usage: hetpu-matmul"), std::string::npos) << usage;
    EXPECT_NE(usage.find("--precision"), std::string::npos) << usage;
    EXPECT_NE(usage.find("default 1024"), std::string::npos) << usage;
}

TEST(MatmulOptions, BadSizesAreRejected)
{
    expect_rejected({"-n", "0"}, {"-n", "0", "[1 - 2147483647]"});
    expect_rejected({"-n", "-5"}, {"-n", "-5"});
    expect_rejected({"-n", "abc"}, {"-n", "abc"});
    expect_rejected({"-n", "12x"}, {"-n", "12x"});
    expect_rejected({"-n", ""}, {"-n"});
    expect_rejected({"-n", " 12"}, {"-n"});
    expect_rejected({"-n", "99999999999999999999999"}, {"-n", "[1 - 2147483647]"});
    expect_rejected({"-n", "4294967296"}, {"-n", "[1 - 2147483647]"});
    expect_rejected({"-n", "64", "-m", "0"}, {"-m"});
    expect_rejected({"-n", "64", "-k", "-1"}, {"-k"});
    expect_rejected({"-n"}, {"-n", "missing"});
}

TEST(MatmulOptions, HugeProblemIsRejected)
{
    expect_rejected({"-m", "2147483647", "-n", "2147483647", "-k", "2147483647"}, {"smaller"});
}

TEST(MatmulOptions, BadBlockIsRejected)
{
    expect_rejected({"-n", "1024", "--block", "999999"}, {"--block", "999999", "1024"});
    expect_rejected({"-n", "1024", "--block", "0"}, {"--block", "0"});
    expect_rejected({"-n", "1024", "--block", "-4"}, {"--block"});
    expect_rejected({"-n", "1024", "--block"}, {"--block", "missing"});
}

TEST(MatmulOptions, BadPrecisionIsRejected)
{
    expect_rejected({"-n", "64", "--precision", "half"}, {"precision", "half", "single", "double"});
    expect_rejected({"-n", "64", "--precision", ""}, {"precision"});
}

TEST(MatmulOptions, OtherBadInputIsRejected)
{
    expect_rejected({"-n", "64", "--reps", "0"}, {"--reps"});
    expect_rejected({"-n", "64", "--reps", "two"}, {"--reps", "two"});
    expect_rejected({"-n", "64", "--seed", "-1"}, {"--seed"});
    expect_rejected({"-n", "64", "--seed", "18446744073709551616"}, {"--seed"});
    expect_rejected({"-n", "64", "--json", ""}, {"--json"});
    expect_rejected({"-n", "64", "--json"}, {"--json", "missing"});
    expect_rejected({"-n", "64", "--frobnicate"}, {"not expected", "--frobnicate"});
    expect_rejected({"-n", "64", "-x"}, {"not expected", "-x"});
    expect_rejected({"-n", "64", "stray"}, {"not expected", "stray"});
}

TEST(MatmulOptions, SeedTakesTheWholeRange)
{
    Parsed p = parse({"--seed", "18446744073709551615"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.seed, UINT64_MAX);
}
