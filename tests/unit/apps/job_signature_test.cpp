// SPDX-License-Identifier: LGPL-2.1-or-later
// The job signature the ranks of an MPI launch compare: what the
// command line asks for, without the options that may differ per rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "apps/common/app_options.h"
#include "apps/grn/grn_options.h"
#include "apps/kmeans/kmeans_options.h"
#include "apps/matmul/matmul_options.h"

namespace {

template <typename Options>
std::string signature_of(bool (*parse)(int, const char *const[], Options &, std::string &),
                         std::vector<const char *> args)
{
    args.insert(args.begin(), "prog");
    Options o;
    std::string error;
    EXPECT_TRUE(parse(static_cast<int>(args.size()), args.data(), o, error)) << error;
    return hetpu::apps::remembered_job_signature();
}

TEST(JobSignature, NamesEveryOptionThatShapesTheJob)
{
    const std::string sig = signature_of(hetpu::matmul::parse_options, {"-n", "512", "--seed", "7"});
    EXPECT_NE(sig.find("n=512"), std::string::npos) << sig;
    EXPECT_NE(sig.find("seed=7"), std::string::npos) << sig;
    // Options not given still count, with their default: "--seed 42" and no --seed are one job.
    EXPECT_NE(signature_of(hetpu::matmul::parse_options, {"-n", "512"}).find("seed=42"), std::string::npos);
    EXPECT_EQ(signature_of(hetpu::matmul::parse_options, {"-n", "512"}),
              signature_of(hetpu::matmul::parse_options, {"-n", "512", "--seed", "42"}));
}

TEST(JobSignature, DifferentJobsDiffer)
{
    EXPECT_NE(signature_of(hetpu::matmul::parse_options, {"-n", "256"}),
              signature_of(hetpu::matmul::parse_options, {"-n", "512"}));
    EXPECT_NE(signature_of(hetpu::matmul::parse_options, {"--seed", "1"}),
              signature_of(hetpu::matmul::parse_options, {"--seed", "2"}));
    EXPECT_NE(signature_of(hetpu::kmeans::parse_options, {"-k", "4"}),
              signature_of(hetpu::kmeans::parse_options, {"-k", "5"}));
    EXPECT_NE(signature_of(hetpu::grn::parse_options, {"-k", "1"}),
              signature_of(hetpu::grn::parse_options, {"-k", "2"}));
}

TEST(JobSignature, PerRankOptionsAreLeftOut)
{
    EXPECT_EQ(signature_of(hetpu::matmul::parse_options, {"-n", "256", "--json", "a.jsonl"}),
              signature_of(hetpu::matmul::parse_options, {"-n", "256"}));
    const std::string sig =
        signature_of(hetpu::kmeans::parse_options,
                     {"-k", "4", "--centroids", "c.csv", "--checkpoint-every", "5", "--checkpoint-dir", "/tmp/x"});
    EXPECT_EQ(sig, signature_of(hetpu::kmeans::parse_options,
                                {"-k", "4", "--checkpoint-every", "5", "--checkpoint-dir", "/tmp/y"}));
    EXPECT_EQ(sig.find("c.csv"), std::string::npos) << sig;
    EXPECT_EQ(sig.find("help"), std::string::npos) << sig;
}

}  // namespace
