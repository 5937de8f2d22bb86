// SPDX-License-Identifier: LGPL-2.1-or-later
// kmeans cores: options, the binary format, blob generation, the assignment kernel and
// the Lloyd loop against an independent brute-force check.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "apps/kmeans/kmeans_data.h"
#include "apps/kmeans/kmeans_kernels.h"
#include "apps/kmeans/kmeans_lloyd.h"
#include "apps/kmeans/kmeans_options.h"

using namespace hetpu::kmeans;

namespace {

bool parse(std::vector<const char *> args, Options &o, std::string &error)
{
    args.insert(args.begin(), "kmeans");
    return parse_options(static_cast<int>(args.size()), args.data(), o, error);
}

// Inertia of centroids computed the plain way (no shared code with the kernel).
double brute_inertia(const Points &p, const std::vector<double> &c, uint32_t k)
{
    double total = 0;
    for (uint64_t i = 0; i < p.n; ++i) {
        double best = std::numeric_limits<double>::infinity();
        for (uint32_t j = 0; j < k; ++j) {
            double s = 0;
            for (uint32_t t = 0; t < p.d; ++t)
                s += std::pow(p.x[i * p.d + t] - c[j * p.d + t], 2);
            best = std::min(best, s);
        }
        total += best;
    }
    return total;
}

}  // namespace

TEST(KmeansOptions, DefaultsAndErrors)
{
    Options o;
    std::string error;
    ASSERT_TRUE(parse({}, o, error)) << error;  // the default problem
    EXPECT_EQ(o.k, kDefaultK);
    EXPECT_EQ(o.generate, kDefaultPoints);
    EXPECT_EQ(o.blobs, kDefaultK);
    ASSERT_TRUE(parse({"--input", "p.csv"}, o, error)) << error;
    EXPECT_EQ(o.generate, 0u);
    EXPECT_FALSE(parse({"-k", "0", "--generate", "100"}, o, error));
    EXPECT_NE(error.find("-k"), std::string::npos) << error;
    EXPECT_FALSE(parse({"--input", "p.csv", "--generate", "100"}, o, error));
    EXPECT_NE(error.find("choose one"), std::string::npos) << error;
    EXPECT_FALSE(parse({"--sigma", "0"}, o, error));
    EXPECT_NE(error.find("--sigma"), std::string::npos) << error;
    EXPECT_FALSE(parse({"-k", "300", "--generate", "100"}, o, error));
    EXPECT_NE(error.find("larger than the 100 points"), std::string::npos) << error;
    EXPECT_FALSE(parse({"-k", "3", "--generate", "100", "--tol", "-1"}, o, error));
    ASSERT_TRUE(parse({"-k", "3", "--generate", "100", "--dims=4", "--verify"}, o, error)) << error;
    EXPECT_EQ(o.k, 3u);
    EXPECT_EQ(o.dims, 4u);
    EXPECT_EQ(o.blobs, 3u);
    EXPECT_TRUE(o.verify);
    EXPECT_FALSE(check_size(1ull << 31, 4, "big.bin", error));
    EXPECT_NE(error.find("big.bin: 2147483648 points x 4 dimensions"), std::string::npos) << error;
    EXPECT_TRUE(check_size(1000, 4, "p.csv", error));
    EXPECT_FALSE(check_k(11, 10, "p.csv", error));
    EXPECT_NE(error.find("k = 11 is larger than the 10 points of p.csv"), std::string::npos) << error;
}

TEST(KmeansData, BinaryRoundTripAndTruncation)
{
    Blobs b = generate_blobs(50, 3, 4, 1.0, 7);
    const std::string path = testing::TempDir() + "kmeans_points.bin";
    std::string error;
    ASSERT_TRUE(write_points(path, b.points, error)) << error;
    Points back;
    ASSERT_TRUE(read_points(path, back, error)) << error;
    EXPECT_EQ(back.n, 50u);
    EXPECT_EQ(back.d, 3u);
    EXPECT_EQ(back.x, b.points.x);  // bit for bit
    // Cut the file short: the size check must refuse it.
    std::string data;
    {
        std::ifstream in(path, std::ios::binary);
        data.assign(std::istreambuf_iterator<char>(in), {});
    }
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(data.data(), static_cast<std::streamsize>(data.size() - 8));
    }
    EXPECT_FALSE(read_points(path, back, error));
    EXPECT_NE(error.find("truncated"), std::string::npos) << error;
    std::remove(path.c_str());
}

TEST(KmeansData, CsvRoundTripIsExact)
{
    Blobs b = generate_blobs(20, 2, 2, 0.5, 3);
    const std::string path = testing::TempDir() + "kmeans_points.csv";
    std::string error;
    ASSERT_TRUE(write_points(path, b.points, error)) << error;
    Points back;
    ASSERT_TRUE(read_points(path, back, error)) << error;
    EXPECT_EQ(back.x, b.points.x);  // %.17g round-trips doubles
    std::remove(path.c_str());
}

TEST(KmeansData, BlobsAreDeterministicAndCentred)
{
    Blobs a = generate_blobs(3000, 2, 3, 1.0, 11), b = generate_blobs(3000, 2, 3, 1.0, 11);
    EXPECT_EQ(a.points.x, b.points.x);
    // Mean of blob c's points (i % 3 == c) is close to its centre: sigma / sqrt(1000).
    for (uint32_t c = 0; c < 3; ++c)
        for (uint32_t j = 0; j < 2; ++j) {
            double mean = 0;
            for (uint64_t i = c; i < 3000; i += 3)
                mean += a.points.x[i * 2 + j];
            mean /= 1000;
            EXPECT_NEAR(mean, a.centres[c * 2 + j], 0.15);
        }
}

TEST(KmeansLloyd, ChunksOfTheFixedSumOrderDependOnTheBlockAlone)
{
    EXPECT_EQ(hetpu_kmeans_chunk_points(0), HETPU_KMEANS_MIN_CHUNK);
    EXPECT_EQ(hetpu_kmeans_chunk_points(997), HETPU_KMEANS_MIN_CHUNK);
    EXPECT_EQ(hetpu_kmeans_chunk_points(uint64_t{HETPU_KMEANS_MIN_CHUNK} * HETPU_KMEANS_MAX_CHUNKS),
              HETPU_KMEANS_MIN_CHUNK);
    for (uint64_t n : {uint64_t{4198401}, uint64_t{50000000}, uint64_t{1} << 40}) {
        const uint64_t c = hetpu_kmeans_chunk_points(n);
        EXPECT_LE((n + c - 1) / c, HETPU_KMEANS_MAX_CHUNKS) << n;              // the GPU kernels' shared memory
        EXPECT_GT((n + (c - 1) - 1) / (c - 1), HETPU_KMEANS_MAX_CHUNKS) << n;  // and no larger than needed
    }
}

TEST(KmeansLloyd, AssignBlockSumsChunksInOrder)
{
    // 5000 points: chunks of 1024 (four) and 904, each summed in point order, then in order.
    Blobs b = generate_blobs(5000, 3, 5, 2.0, 9);
    IterationState s = initial_state(b.points, 5, 1);
    const uint64_t n = b.points.n;
    std::vector<int32_t> labels(n);
    std::vector<double> got(partial_size(5, 3));
    assign_block(b.points.x.data(), n, s.centroids.data(), 5, 3, labels.data(), got.data(), 3);
    std::vector<double> want(got.size(), 0.0);
    for (uint64_t lo = 0; lo < n; lo += HETPU_KMEANS_MIN_CHUNK) {
        std::vector<double> chunk(got.size(), 0.0);
        for (uint64_t i = lo; i < std::min(n, lo + HETPU_KMEANS_MIN_CHUNK); ++i) {
            const int32_t c = labels[i];
            double dist2 = 0;
            for (uint32_t j = 0; j < 3; ++j) {
                chunk[c * 3 + j] += b.points.x[i * 3 + j];
                const double diff = b.points.x[i * 3 + j] - s.centroids[c * 3 + j];
                dist2 += diff * diff;
            }
            chunk[15 + c] += 1.0;
            chunk[20] += dist2;
        }
        for (size_t g = 0; g < got.size(); ++g)
            want[g] += chunk[g];
    }
    EXPECT_EQ(got, want);
}

TEST(KmeansLloyd, AssignBlockMatchesBruteForceAndThreadCount)
{
    Blobs b = generate_blobs(4997, 3, 5, 2.0, 5);
    IterationState s = initial_state(b.points, 5, 1);
    const uint64_t n = b.points.n;
    std::vector<int32_t> l1(n), l4(n);
    std::vector<double> p1(partial_size(5, 3)), p4(partial_size(5, 3));
    assign_block(b.points.x.data(), n, s.centroids.data(), 5, 3, l1.data(), p1.data(), 1);
    assign_block(b.points.x.data(), n, s.centroids.data(), 5, 3, l4.data(), p4.data(), 4);
    EXPECT_EQ(l1, l4);
    EXPECT_EQ(p1, p4);  // the same order of sums whatever the threads
    EXPECT_NEAR(p1.back(), brute_inertia(b.points, s.centroids, 5), 1e-9 * p1.back());
    double counted = 0;
    for (uint32_t c = 0; c < 5; ++c)
        counted += p1[15 + c];
    EXPECT_EQ(counted, 4997.0);
}

TEST(KmeansLloyd, KmeansPlusPlusPicksDistinctDataPoints)
{
    Blobs b = generate_blobs(500, 2, 6, 0.5, 9);
    IterationState s = initial_state(b.points, 6, 4);
    ASSERT_EQ(s.centroids.size(), 12u);
    for (uint32_t c = 0; c < 6; ++c) {
        bool is_point = false;
        for (uint64_t i = 0; i < 500 && !is_point; ++i)
            is_point = b.points.x[i * 2] == s.centroids[c * 2] && b.points.x[i * 2 + 1] == s.centroids[c * 2 + 1];
        EXPECT_TRUE(is_point) << "centre " << c;
        for (uint32_t o = 0; o < c; ++o)
            EXPECT_FALSE(s.centroids[c * 2] == s.centroids[o * 2] && s.centroids[c * 2 + 1] == s.centroids[o * 2 + 1]);
    }
}

TEST(KmeansLloyd, ReferenceRecoversPlantedCentres)
{
    Blobs b = generate_blobs(4000, 3, 6, 1.0, 21);
    LloydSettings settings;
    settings.k = 6;
    IterationState s;
    LloydResult r;
    ASSERT_EQ(reference_kmeans(b.points, settings, 42, s, r), 0);
    EXPECT_TRUE(s.converged);
    EXPECT_EQ(r.passes, s.iteration + 1);
    // Each blob's mean is within a few sigma/sqrt(n_blob) of its centre.
    EXPECT_LT(centre_recovery_error(s.centroids, b.centres, 3), 0.2);
    EXPECT_NEAR(s.inertia, brute_inertia(b.points, s.centroids, 6), 1e-9 * s.inertia);
    // Labels are each point's nearest final centroid.
    for (uint64_t i = 0; i < b.points.n; i += 97) {
        double d2;
        EXPECT_EQ(r.labels[i], nearest_centroid(&b.points.x[i * 3], s.centroids.data(), 6, 3, &d2));
    }
}

TEST(KmeansLloyd, BlockedPassesGiveTheReferenceResult)
{
    Blobs b = generate_blobs(3001, 2, 4, 1.5, 8);
    LloydSettings settings;
    settings.k = 4;
    IterationState ref;
    LloydResult ref_result;
    ASSERT_EQ(reference_kmeans(b.points, settings, 3, ref, ref_result), 0);

    // The StarPU job's way: uneven blocks, partials reduced in block order.
    IterationState s = initial_state(b.points, 4, 3);
    const uint64_t cuts[] = {0, 7, 1000, 1001, 2500, 3001};
    AssignPass blocked = [&](const std::vector<double> &c, std::vector<int32_t> &labels, std::vector<double> &totals) {
        std::fill(totals.begin(), totals.end(), 0.0);
        std::vector<double> part(totals.size());
        for (int i = 0; i + 1 < 6; ++i) {
            assign_block(&b.points.x[cuts[i] * 2], cuts[i + 1] - cuts[i], c.data(), 4, 2, &labels[cuts[i]], part.data(),
                         2);
            for (size_t j = 0; j < totals.size(); ++j)
                totals[j] += part[j];
        }
        return 0;
    };
    unsigned hooked = 0;
    LloydResult result;
    ASSERT_EQ(run_lloyd(
                  b.points, settings, s, blocked,
                  [&](const IterationState &st) {
                      EXPECT_EQ(st.iteration, ++hooked);
                      return 0;
                  },
                  result),
              0);
    EXPECT_EQ(hooked, s.iteration);
    EXPECT_EQ(s.iteration, ref.iteration);
    EXPECT_EQ(result.labels, ref_result.labels);
    EXPECT_NEAR(s.inertia, ref.inertia, 1e-9 * ref.inertia);
}

TEST(KmeansLloyd, HookErrorStopsAndIterationLimitHolds)
{
    Blobs b = generate_blobs(600, 2, 3, 4.0, 2);
    LloydSettings settings;
    settings.k = 3;
    settings.max_iter = 1;
    IterationState s = initial_state(b.points, 3, 1);
    AssignPass serial = [&](const std::vector<double> &c, std::vector<int32_t> &labels, std::vector<double> &totals) {
        assign_block(b.points.x.data(), b.points.n, c.data(), 3, 2, labels.data(), totals.data(), 1);
        return 0;
    };
    LloydResult r;
    ASSERT_EQ(run_lloyd(b.points, settings, s, serial, nullptr, r), 0);
    EXPECT_EQ(s.iteration, 1u);
    EXPECT_EQ(r.passes, 2u);
    settings.max_iter = 10;
    IterationState s2 = initial_state(b.points, 3, 1);
    EXPECT_EQ(run_lloyd(
                  b.points, settings, s2, serial, [](const IterationState &) { return -EIO; }, r),
              -EIO);
}
