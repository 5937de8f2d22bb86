// SPDX-License-Identifier: LGPL-2.1-or-later
// kmeans checkpoint bytes: a state survives the round trip bit for bit and continues the run
// exactly; checkpoints of another k, d, seed or data set, of another format, or corrupted,
// are refused with a message saying what differs. Also the checkpoint options.
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "apps/kmeans/kmeans_checkpoint_format.h"
#include "apps/kmeans/kmeans_lloyd.h"
#include "apps/kmeans/kmeans_options.h"

using namespace hetpu::kmeans;

namespace {

Points small_points(uint64_t seed = 7) { return generate_blobs(600, 3, 4, 1.0, seed).points; }

IterationState some_state(uint32_t k, uint32_t d)
{
    IterationState s;
    for (uint32_t i = 0; i < k * d; ++i)
        s.centroids.push_back(std::ldexp(1.0 + i, -static_cast<int>(i)) - 3.25 * i);  // distinct, exact values
    s.iteration = 17;
    s.rng_state = 0x0123456789abcdefull;
    s.inertia = 1234.5678901234567;
    s.shift2 = 1e-300;  // a subnormal-adjacent value must survive too
    s.changed = 42;
    s.converged = true;
    return s;
}

std::vector<unsigned char> encoded(const IterationState &s, const InputFingerprint &fp)
{
    std::vector<unsigned char> buf(checkpoint_size(fp.k, fp.d));
    encode_checkpoint(s, fp, buf.data());
    return buf;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST(KmeansCheckpoint, SizeIsHeaderPlusCentroids)
{
    EXPECT_EQ(checkpoint_size(4, 3), kCheckpointHeaderSize + 12 * sizeof(double));
    EXPECT_EQ(checkpoint_size(1, 1), kCheckpointHeaderSize + sizeof(double));
}

TEST(KmeansCheckpoint, RoundTripKeepsEveryFieldBitForBit)
{
    const Points p = small_points();
    const InputFingerprint fp = fingerprint_of(p, 4, 99);
    const IterationState s = some_state(4, 3);
    const std::vector<unsigned char> buf = encoded(s, fp);
    IterationState out;
    std::string error;
    ASSERT_TRUE(decode_checkpoint(buf.data(), buf.size(), fp, out, error)) << error;
    ASSERT_EQ(out.centroids.size(), s.centroids.size());
    for (size_t i = 0; i < s.centroids.size(); ++i)
        EXPECT_TRUE(same_bits(out.centroids[i], s.centroids[i])) << i;
    EXPECT_EQ(out.iteration, s.iteration);
    EXPECT_EQ(out.rng_state, s.rng_state);
    EXPECT_TRUE(same_bits(out.inertia, s.inertia));
    EXPECT_TRUE(same_bits(out.shift2, s.shift2));
    EXPECT_EQ(out.changed, s.changed);
    EXPECT_EQ(out.converged, s.converged);

    IterationState not_converged = s;
    not_converged.converged = false;
    const std::vector<unsigned char> buf2 = encoded(not_converged, fp);
    ASSERT_TRUE(decode_checkpoint(buf2.data(), buf2.size(), fp, out, error)) << error;
    EXPECT_FALSE(out.converged);
}

// The property --restart relies on: a run stopped after any iteration and continued from the
// decoded state ends exactly where the uninterrupted run ends (centroids, iterations,
// inertia, labels), even though the continued run has no previous labels.
TEST(KmeansCheckpoint, RunContinuedFromDecodedStateEqualsUninterruptedRun)
{
    // Wide overlapping blobs: Lloyd needs tens of iterations, so there is much to resume.
    const Points p = generate_blobs(1500, 2, 10, 20.0, 3).points;
    for (double tol : {0.0, 1e-4}) {
        LloydSettings settings;
        settings.k = 12;
        settings.max_iter = 200;
        settings.tol = tol;
        IterationState full;
        LloydResult full_result;
        ASSERT_EQ(reference_kmeans(p, settings, 11, full, full_result), 0);
        ASSERT_GE(full.iteration, 10u) << "too easy a data set to test a restart";

        const InputFingerprint fp = fingerprint_of(p, settings.k, 11);
        AssignPass serial = [&](const std::vector<double> &c, std::vector<int32_t> &labels,
                                std::vector<double> &totals) {
            assign_block(p.x.data(), p.n, c.data(), settings.k, p.d, labels.data(), totals.data(), 1);
            return 0;
        };
        for (uint32_t stop = 1; stop <= full.iteration; ++stop) {
            // The first run "dies" right after checkpointing iteration `stop`.
            std::vector<unsigned char> saved;
            IterationHook hook = [&](const IterationState &s) {
                if (s.iteration != stop)
                    return 0;
                saved = encoded(s, fp);
                return -EINTR;
            };
            IterationState first = initial_state(p, settings.k, 11);
            LloydResult ignored;
            ASSERT_EQ(run_lloyd(p, settings, first, serial, hook, ignored), -EINTR);

            IterationState resumed;
            std::string error;
            ASSERT_TRUE(decode_checkpoint(saved.data(), saved.size(), fp, resumed, error)) << error;
            LloydResult resumed_result;
            ASSERT_EQ(run_lloyd(p, settings, resumed, serial, nullptr, resumed_result), 0);
            EXPECT_EQ(resumed.iteration, full.iteration) << "tol " << tol << " stop " << stop;
            EXPECT_EQ(resumed.converged, full.converged) << "tol " << tol << " stop " << stop;
            EXPECT_TRUE(same_bits(resumed.inertia, full.inertia)) << "tol " << tol << " stop " << stop;
            EXPECT_EQ(
                std::memcmp(resumed.centroids.data(), full.centroids.data(), full.centroids.size() * sizeof(double)), 0)
                << "tol " << tol << " stop " << stop;
            EXPECT_EQ(resumed_result.labels, full_result.labels) << "tol " << tol << " stop " << stop;
        }
    }
}

TEST(KmeansCheckpoint, OtherKOrDimensionsRefusedFromTheHeaderAlone)
{
    const Points p = small_points();
    const InputFingerprint fp = fingerprint_of(p, 4, 99);
    const std::vector<unsigned char> buf = encoded(some_state(4, 3), fp);
    InputFingerprint other_k = fp;
    other_k.k = 5;
    std::string error;
    EXPECT_FALSE(check_checkpoint_header(buf.data(), other_k, error));
    EXPECT_NE(error.find("k = 4"), std::string::npos) << error;
    EXPECT_NE(error.find("k = 5"), std::string::npos) << error;
    EXPECT_NE(error.find("same -k"), std::string::npos) << error;

    const Points p4 = generate_blobs(600, 4, 4, 1.0, 7).points;  // same n, one more dimension
    error.clear();
    EXPECT_FALSE(check_checkpoint_header(buf.data(), fingerprint_of(p4, 4, 99), error));
    EXPECT_NE(error.find("x 3 dims"), std::string::npos) << error;
    EXPECT_NE(error.find("x 4 dims"), std::string::npos) << error;
    EXPECT_TRUE(check_checkpoint_header(buf.data(), fp, error)) << error;
}

TEST(KmeansCheckpoint, OtherDataOrSeedRefused)
{
    const Points p = small_points(7);
    const InputFingerprint fp = fingerprint_of(p, 4, 99);
    const std::vector<unsigned char> buf = encoded(some_state(4, 3), fp);
    IterationState out;
    std::string error;

    // Same n, d and k; one coordinate differs.
    Points changed = p;
    changed.x[1234] = std::nextafter(changed.x[1234], std::numeric_limits<double>::infinity());
    EXPECT_FALSE(decode_checkpoint(buf.data(), buf.size(), fingerprint_of(changed, 4, 99), out, error));
    EXPECT_NE(error.find("other points"), std::string::npos) << error;

    error.clear();
    EXPECT_FALSE(decode_checkpoint(buf.data(), buf.size(), fingerprint_of(p, 4, 100), out, error));
    EXPECT_NE(error.find("seed 99"), std::string::npos) << error;
    EXPECT_NE(error.find("seed 100"), std::string::npos) << error;

    Points fewer = p;
    fewer.n -= 1;
    fewer.x.resize(fewer.n * fewer.d);
    error.clear();
    EXPECT_FALSE(decode_checkpoint(buf.data(), buf.size(), fingerprint_of(fewer, 4, 99), out, error));
    EXPECT_NE(error.find("599 points"), std::string::npos) << error;
    EXPECT_TRUE(out.centroids.empty()) << "a refused checkpoint must leave the state alone";
}

TEST(KmeansCheckpoint, WrongMagicFormatOrCorruptionRefused)
{
    const Points p = small_points();
    const InputFingerprint fp = fingerprint_of(p, 4, 99);
    const std::vector<unsigned char> good = encoded(some_state(4, 3), fp);
    IterationState out;
    std::string error;

    std::vector<unsigned char> bad = good;
    bad[0] ^= 1;
    EXPECT_FALSE(decode_checkpoint(bad.data(), bad.size(), fp, out, error));
    EXPECT_NE(error.find("not a kmeans checkpoint"), std::string::npos) << error;

    bad = good;
    bad[8] += 1;  // format version
    EXPECT_FALSE(decode_checkpoint(bad.data(), bad.size(), fp, out, error));
    EXPECT_NE(error.find("format version " + std::to_string(kCheckpointFormatVersion + 1)), std::string::npos) << error;

    // Every flipped bit of the state (not the fingerprint, which has its own messages) is caught.
    const size_t state_bytes[] = {20, 48, 56, 64, 72, 80, kCheckpointHeaderSize, good.size() - 1};
    for (size_t at : state_bytes) {
        bad = good;
        bad[at] ^= 0x10;
        error.clear();
        EXPECT_FALSE(decode_checkpoint(bad.data(), bad.size(), fp, out, error)) << "byte " << at;
        EXPECT_NE(error.find("corrupted"), std::string::npos) << "byte " << at << ": " << error;
    }
    EXPECT_FALSE(decode_checkpoint(good.data(), good.size() - 8, fp, out, error));
    EXPECT_TRUE(out.centroids.empty());
    EXPECT_TRUE(decode_checkpoint(good.data(), good.size(), fp, out, error)) << error;
}

namespace {

bool parse(std::vector<const char *> args, Options &o, std::string &error)
{
    args.insert(args.begin(), "kmeans");
    return parse_options(static_cast<int>(args.size()), args.data(), o, error);
}

}  // namespace

TEST(KmeansCheckpoint, Options)
{
    Options o;
    std::string error;
    ASSERT_TRUE(
        parse({"-k", "3", "--generate", "100", "--checkpoint-every", "5", "--checkpoint-dir", "/tmp/c"}, o, error))
        << error;
    EXPECT_EQ(o.checkpoint_every, 5u);
    EXPECT_EQ(o.checkpoint_dir, "/tmp/c");
    EXPECT_FALSE(o.restart);
    ASSERT_TRUE(parse({"-k", "3", "--generate", "100", "--restart", "--checkpoint-dir=/tmp/c"}, o, error)) << error;
    EXPECT_TRUE(o.restart);
    EXPECT_EQ(o.checkpoint_every, 0u);

    EXPECT_FALSE(parse({"-k", "3", "--generate", "100", "--checkpoint-every", "5"}, o, error));
    EXPECT_NE(error.find("needs --checkpoint-dir"), std::string::npos) << error;
    EXPECT_FALSE(parse({"-k", "3", "--generate", "100", "--restart"}, o, error));
    EXPECT_NE(error.find("--restart needs --checkpoint-dir"), std::string::npos) << error;
    EXPECT_FALSE(parse({"-k", "3", "--generate", "100", "--checkpoint-dir", "d"}, o, error));
    EXPECT_NE(error.find("does nothing"), std::string::npos) << error;
    EXPECT_FALSE(parse({"-k", "3", "--generate", "100", "--checkpoint-every", "0", "--checkpoint-dir", "d"}, o, error));
    EXPECT_NE(error.find("--checkpoint-every"), std::string::npos) << error;
    EXPECT_FALSE(parse(
        {"-k", "3", "--generate", "100", "--checkpoint-every", "2", "--checkpoint-dir", "d", "--reps", "2"}, o, error));
    EXPECT_NE(error.find("drop --reps"), std::string::npos) << error;
    EXPECT_FALSE(parse({"-k", "3", "--generate", "100", "--restart=maybe", "--checkpoint-dir", "d"}, o, error));
    EXPECT_NE(error.find("--restart"), std::string::npos) << error;
}

// The global record of a multi-rank run (rank 0 writes it last).
TEST(KmeansGlobalRecord, RoundTripAndRefusals)
{
    int ranks = 0;
    int64_t version = -1;
    std::string error;
    ASSERT_TRUE(hetpu::kmeans::parse_global_record(hetpu::kmeans::global_record_text(3, 17), ranks, version, error))
        << error;
    EXPECT_EQ(ranks, 3);
    EXPECT_EQ(version, 17);
    EXPECT_FALSE(hetpu::kmeans::parse_global_record("", ranks, version, error));
    EXPECT_FALSE(
        hetpu::kmeans::parse_global_record("hetpu-kmeans-global 2\nranks 3\nversion 1\n", ranks, version, error));
    EXPECT_FALSE(
        hetpu::kmeans::parse_global_record("hetpu-kmeans-global 1\nranks 0\nversion 1\n", ranks, version, error));
    EXPECT_FALSE(error.empty());
}
