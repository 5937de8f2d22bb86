// SPDX-License-Identifier: LGPL-2.1-or-later
// grn cores: subset enumeration, the penalised criterion against a hand computation, the
// discretisation rule, blocked CPU scoring against the reference search (bit for bit),
// and recovery of a planted network.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "apps/grn/grn_data.h"
#include "apps/grn/grn_options.h"
#include "apps/grn/grn_score.h"
#include "apps/grn/grn_search.h"

using namespace hetpu::grn;

namespace {

bool parse(std::vector<const char *> args, Options &o, std::string &error)
{
    args.insert(args.begin(), "grn");
    return parse_options(static_cast<int>(args.size()), args.data(), o, error);
}

SearchInput input_for(const PlantedNetwork &net, uint32_t k, uint32_t lag)
{
    const Expression &e = net.expression;
    return make_search_input(discretise(e, 0.43), static_cast<uint32_t>(e.genes.size()), e.samples, lag, k, 1.0);
}

}  // namespace

TEST(GrnSubsets, UnrankAndNextAgreeInLexicographicOrder)
{
    for (uint32_t k = 1; k <= 3; ++k) {
        const uint32_t n = 7;
        const uint64_t total = subset_count(n, k);
        EXPECT_EQ(total, k == 1 ? 7u : k == 2 ? 21u : 35u);
        grn_u32 c[3];
        grn_unrank(0, n, k, c);
        std::set<std::vector<uint32_t>> seen;
        std::vector<uint32_t> previous;
        for (uint64_t r = 0; r < total; ++r) {
            if (r > 0)
                grn_next(c, n, k);
            std::vector<uint32_t> now(c, c + k);
            EXPECT_EQ(now, subset_of(r, n, k)) << "rank " << r;
            for (uint32_t i = 1; i < k; ++i)
                EXPECT_LT(now[i - 1], now[i]);
            if (r > 0) {
                EXPECT_LT(previous, now);  // strictly increasing: lexicographic
            }
            seen.insert(now);
            previous = now;
        }
        EXPECT_EQ(seen.size(), total);
        EXPECT_EQ(previous.back(), n - 1);
        EXPECT_EQ(previous.front(), n - k);
    }
}

TEST(GrnCriterion, HandComputedPenalisedEntropy)
{
    // k = 1 (3 configurations), 4 samples: configuration 0 always gives level 0 (f = 2),
    // configuration 1 gives levels 1 and 2 (f = 2), configuration 2 is never seen.
    const int counts[9] = {2, 0, 0, 0, 1, 1, 0, 0, 0};
    std::vector<double> xlogx(5);
    for (int m = 1; m <= 4; ++m)
        xlogx[m] = m * std::log(m);
    // H(Y) with target levels (2, 1, 1) out of 4, in base 3.
    const double hy = -(0.5 * std::log(0.5) + 2 * 0.25 * std::log(0.25)) / std::log(3.0);
    const double alpha = 1.0, denom = alpha * 3 + 4;
    const double expected =
        (2 + alpha) / denom * 0.0 + (2 + alpha) / denom * (std::log(2.0) / std::log(3.0)) + alpha * 1 / denom * hy;
    EXPECT_NEAR(grn_criterion(counts, 3, 4, xlogx.data(), hy, alpha), expected, 1e-15);
    // Without the penalty it is the plain mean conditional entropy: 0.5 * 0 + 0.5 * log_3 2.
    EXPECT_NEAR(grn_criterion(counts, 3, 4, xlogx.data(), hy, 0.0), 0.5 * std::log(2.0) / std::log(3.0), 1e-15);
}

TEST(GrnCriterion, PerfectPredictorScoresZeroOnlyWhenAllConfigurationsSeen)
{
    std::vector<double> xlogx(10);
    for (int m = 1; m <= 9; ++m)
        xlogx[m] = m * std::log(m);
    const int all_seen[9] = {3, 0, 0, 0, 3, 0, 0, 0, 3};
    EXPECT_EQ(grn_criterion(all_seen, 3, 9, xlogx.data(), 1.0, 1.0), 0.0);
    const int one_unseen[9] = {5, 0, 0, 0, 4, 0, 0, 0, 0};
    EXPECT_GT(grn_criterion(one_unseen, 3, 9, xlogx.data(), 0.6, 1.0), 0.0);
}

TEST(GrnData, DiscretisationRule)
{
    Expression e;
    e.genes = {"a", "flat"};
    e.samples = 3;
    e.values = {-1.0, 0.0, 1.0, 5.0, 5.0, 5.0};
    const std::vector<uint8_t> levels = discretise(e, 0.43);
    EXPECT_EQ(levels, (std::vector<uint8_t>{0, 1, 2, 1, 1, 1}));
    // z = +-1.22 here: a threshold above it puts everything in the middle level.
    EXPECT_EQ(discretise(e, 1.3), (std::vector<uint8_t>{1, 1, 1, 1, 1, 1}));
}

TEST(GrnData, PlantedNetworkShape)
{
    PlantedNetwork net = generate_network(30, 50, 2, 0.05, 3);
    EXPECT_EQ(net.edges.size(), 60u);
    EXPECT_EQ(net.expression.values.size(), 30u * 50);
    std::vector<int> indegree(30);
    for (const Edge &e : net.edges) {
        EXPECT_NE(e.regulator, e.target);
        ++indegree[e.target];
    }
    for (int d : indegree)
        EXPECT_EQ(d, 2);
    EXPECT_EQ(std::set<Edge>(net.edges.begin(), net.edges.end()).size(), 60u);
    PlantedNetwork again = generate_network(30, 50, 2, 0.05, 3);
    EXPECT_EQ(again.expression.values, net.expression.values);
}

TEST(GrnSearch, BlockedCpuScoringEqualsReferenceBitForBit)
{
    for (uint32_t k = 1; k <= 3; ++k) {
        PlantedNetwork net = generate_network(13, 40, k, 0.1, 17 + k);
        SearchInput in = input_for(net, k, 1);
        const std::vector<Best> ref = reference_search(in);
        const uint64_t total = subset_count(in.genes, in.k);
        for (int threads : {1, 3}) {
            const uint32_t lanes = threads == 1 ? kLanes : 5;  // the layout must not matter either
            std::vector<Best> best(in.genes);
            // Uneven blocks, merged in reverse order: the result must not care.
            std::vector<uint64_t> cuts = {0, 1, total / 3, total / 3 + 5, total};
            for (size_t b = cuts.size() - 1; b > 0; --b) {
                BlockArgs a{in.genes, in.samples, in.lag, in.k, lanes, in.alpha, cuts[b - 1], cuts[b] - cuts[b - 1]};
                std::vector<double> out(block_output_size(in.genes, lanes));
                score_block_cpu(a, in.levels.data(), in.xlogx.data(), in.hy.data(), out.data(), threads);
                merge_block(best, out.data(), in.genes, lanes);
            }
            for (uint32_t t = 0; t < in.genes; ++t) {
                EXPECT_EQ(std::memcmp(&best[t].score, &ref[t].score, sizeof(double)), 0)
                    << "k " << k << " target " << t;
                EXPECT_EQ(best[t].rank, ref[t].rank);
                EXPECT_GE(best[t].rank, 0);
            }
        }
    }
}

TEST(GrnSearch, ReferenceRecoversAPlantedNetwork)
{
    PlantedNetwork net = generate_network(24, 120, 2, 0.02, 5);
    SearchInput in = input_for(net, 2, 1);
    const std::vector<Edge> edges = edges_from_best(reference_search(in), in.genes, 2, 1.0);
    const Recovery r = compare_edges(edges, net.edges);
    EXPECT_EQ(r.inferred, 48u);
    EXPECT_GE(r.precision, 0.95);
    EXPECT_GE(r.recall, 0.95);
    // Without the time lag the causal direction is lost: recovery must be worse.
    const Recovery r0 = compare_edges(edges_from_best(reference_search(input_for(net, 2, 0)), 24, 2, 1.0), net.edges);
    EXPECT_LT(r0.recall, r.recall);
}

TEST(GrnSearch, EdgesAboveMaxScoreAreDropped)
{
    // 5 genes, k = 2: rank 0 is {0, 1}, rank 1 is {0, 2}.
    std::vector<Best> best(5);  // targets 0 and 1: nothing scored
    best[2] = {0.9, 0};         // above the limit
    best[3] = {0.2, 1};
    best[4] = {0.1, 0};
    const std::vector<Edge> edges = edges_from_best(best, 5, 2, 0.5);
    EXPECT_EQ(edges, (std::vector<Edge>{{0, 3}, {0, 4}, {1, 4}, {2, 3}}));
    const Recovery r = compare_edges({{0, 2}, {1, 2}}, {{0, 2}, {1, 3}, {2, 3}});
    EXPECT_EQ(r.true_positives, 1u);
    EXPECT_DOUBLE_EQ(r.precision, 0.5);
    EXPECT_DOUBLE_EQ(r.recall, 1.0 / 3);
}

TEST(GrnSearch, ConstantTargetsGetNoEdges)
{
    PlantedNetwork net = generate_network(10, 40, 2, 0.05, 9);
    for (uint32_t j = 0; j < 40; ++j)
        net.expression.values[3 * 40 + j] = 2.5;  // gene 3 never changes
    SearchInput in = input_for(net, 2, 1);
    EXPECT_EQ(in.hy[3], 0.0);
    std::vector<Best> best = reference_search(in);
    EXPECT_EQ(best[3].score, 0.0);  // every subset "predicts" a constant perfectly
    EXPECT_EQ(drop_constant_targets(best, in.hy), 1u);
    for (const Edge &e : edges_from_best(best, 10, 2, 1.0))
        EXPECT_NE(e.target, 3u);
    EXPECT_GE(best[4].rank, 0);
}

TEST(GrnSearch, LanesShrinkForManyGenes)
{
    EXPECT_EQ(lanes_for(100), kLanes);
    EXPECT_EQ(lanes_for(4096), kLanes);
    EXPECT_EQ(lanes_for(8192), 16u);
    EXPECT_EQ(lanes_for(100000), 1u);
}

TEST(GrnOptions, ErrorsNameTheProblem)
{
    Options o;
    std::string error;
    ASSERT_TRUE(parse({}, o, error)) << error;
    EXPECT_EQ(o.generate, kDefaultGenes);  // no data: the default generated network
    EXPECT_FALSE(parse({"--input", "x.tsv", "--generate", "10"}, o, error));
    EXPECT_NE(error.find("choose one"), std::string::npos) << error;
    EXPECT_FALSE(parse({"--generate", "10", "-k", "4"}, o, error));
    EXPECT_NE(error.find("-k"), std::string::npos) << error;
    EXPECT_FALSE(parse({"--generate", "3", "-k", "3"}, o, error));
    EXPECT_NE(error.find("at least 4 genes"), std::string::npos) << error;
    EXPECT_FALSE(parse({"--input", "x.tsv", "--truth", "t.tsv"}, o, error));
    ASSERT_TRUE(parse({"--generate", "50", "-k", "3"}, o, error)) << error;
    EXPECT_EQ(o.lag, 1);
    EXPECT_EQ(o.regulators, 3u);
    ASSERT_TRUE(parse({"--input", "x.tsv"}, o, error)) << error;
    EXPECT_EQ(o.lag, 0);
    EXPECT_FALSE(check_sizes(o, 2, 10, "x.tsv", error));
    EXPECT_NE(error.find("x.tsv has 2 genes"), std::string::npos) << error;
    EXPECT_FALSE(parse({"--noise", "nan"}, o, error));
    EXPECT_NE(error.find("--noise"), std::string::npos) << error;
    EXPECT_FALSE(parse({"--lag=-1"}, o, error));
    EXPECT_NE(error.find("--lag"), std::string::npos) << error;
    ASSERT_TRUE(parse({"--generate=20", "--samples", "30", "--max-score=0.5"}, o, error)) << error;
    EXPECT_EQ(o.generate, 20u);
    EXPECT_EQ(o.samples, 30u);
    EXPECT_EQ(o.max_score, 0.5);
    EXPECT_NE(usage("hetpu-grn").find("--max-score"), std::string::npos);
}
