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

TEST(MatmulOptions, HelpNeedsNoSize)
{
    for (const char *h : {"-h", "--help"}) {
        Parsed p = parse({h});
        ASSERT_TRUE(p.ok) << p.error;
        EXPECT_TRUE(p.options.help);
    }
    EXPECT_NE(hetpu::matmul::usage("matmul").find("--precision"), std::string::npos);
}

TEST(MatmulOptions, BadSizesAreRejected)
{
    expect_rejected({"-n", "0"}, {"-n", "0", "between 1 and"});
    expect_rejected({"-n", "-5"}, {"-n", "-5"});
    expect_rejected({"-n", "abc"}, {"-n", "abc"});
    expect_rejected({"-n", "12x"}, {"-n", "12x"});
    expect_rejected({"-n", ""}, {"-n"});
    expect_rejected({"-n", " 12"}, {"-n"});
    expect_rejected({"-n", "99999999999999999999999"}, {"-n", "between 1 and"});
    expect_rejected({"-n", "4294967296"}, {"-n", "between 1 and"});
    expect_rejected({"-n", "64", "-m", "0"}, {"-m"});
    expect_rejected({"-n", "64", "-k", "-1"}, {"-k"});
    expect_rejected({}, {"missing", "-n"});
    expect_rejected({"-m", "8", "-k", "8"}, {"missing -n"});
    expect_rejected({"-n"}, {"-n", "needs a value"});
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
    expect_rejected({"-n", "1024", "--block"}, {"--block", "needs a value"});
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
    expect_rejected({"-n", "64", "--json", ""}, {"--json"});
    expect_rejected({"-n", "64", "--json"}, {"--json", "needs a value"});
    expect_rejected({"-n", "64", "--frobnicate"}, {"unknown option", "--frobnicate", "--help"});
    expect_rejected({"-n", "64", "-x"}, {"unknown option", "-x"});
    expect_rejected({"-n", "64", "stray"}, {"unexpected argument", "stray"});
    expect_rejected({"-n", "64", "--verify=yes"}, {"--verify", "takes no value"});
}

TEST(MatmulOptions, ParseUnsignedIsStrict)
{
    uint64_t v = 0;
    std::string error;
    EXPECT_TRUE(hetpu::matmul::parse_unsigned("18446744073709551615", "x", 0, UINT64_MAX, v, error));
    EXPECT_EQ(v, UINT64_MAX);
    EXPECT_FALSE(hetpu::matmul::parse_unsigned("18446744073709551616", "x", 0, UINT64_MAX, v, error));
    EXPECT_FALSE(hetpu::matmul::parse_unsigned("+5", "x", 0, 10, v, error));
    EXPECT_FALSE(hetpu::matmul::parse_unsigned(nullptr, "x", 0, 10, v, error));
    EXPECT_FALSE(hetpu::matmul::parse_unsigned("11", "thing", 0, 10, v, error));
    EXPECT_NE(error.find("thing"), std::string::npos);
}
