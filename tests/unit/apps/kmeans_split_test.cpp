// SPDX-License-Identifier: LGPL-2.1-or-later
// k-means over points split across processes (what each rank of a multi-rank run holds):
// three "processes" are threads exchanging through an in-memory Collective, so the
// collective algorithms run as they do over MPI, in lockstep, without MPI.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>

#include "apps/kmeans/kmeans_checkpoint_format.h"
#include "apps/kmeans/kmeans_collective.h"
#include "apps/kmeans/kmeans_data.h"
#include "apps/kmeans/kmeans_lloyd.h"

using namespace hetpu::kmeans;

namespace {

// The exchange of `size` threads: all_gather is a barrier with a slot per thread.
class Exchange {
public:
    explicit Exchange(int size) : size_(size), slots_(static_cast<size_t>(size)) {}

    int all_gather(int rank, const void *mine, size_t bytes, std::vector<unsigned char> &all)
    {
        std::unique_lock<std::mutex> lock(mutex_);
        const auto *p = static_cast<const unsigned char *>(mine);
        slots_[static_cast<size_t>(rank)].assign(p, p + bytes);
        arrive(lock);  // every slot written
        all.clear();
        for (const auto &s : slots_)
            all.insert(all.end(), s.begin(), s.end());
        arrive(lock);  // every thread has read them: the slots may be written again
        return 0;
    }

private:
    void arrive(std::unique_lock<std::mutex> &lock)
    {
        const unsigned long generation = generation_;
        if (++arrived_ == size_) {
            arrived_ = 0;
            ++generation_;
            cv_.notify_all();
            return;
        }
        cv_.wait(lock, [&] { return generation_ != generation; });
    }

    int size_;
    int arrived_ = 0;
    unsigned long generation_ = 0;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<std::vector<unsigned char>> slots_;
};

class ThreadCollective final : public Collective {
public:
    ThreadCollective(Exchange &x, int rank, int size) : x_(x), rank_(rank), size_(size) {}
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    int all_gather(const void *mine, size_t bytes, std::vector<unsigned char> &all) override
    {
        return x_.all_gather(rank_, mine, bytes, all);
    }

private:
    Exchange &x_;
    int rank_, size_;
};

// Runs body(rank, share points, offset, collective) on one thread per share.
void on_shares(const Points &all, const std::vector<uint64_t> &counts,
               const std::function<void(int, const Points &, uint64_t, Collective &)> &body)
{
    const int size = static_cast<int>(counts.size());
    Exchange exchange(size);
    std::vector<Points> parts(counts.size());
    std::vector<uint64_t> offsets(counts.size());
    uint64_t next = 0;
    for (size_t r = 0; r < counts.size(); ++r) {
        offsets[r] = next;
        parts[r].n = counts[r];
        parts[r].d = all.d;
        parts[r].x.assign(all.x.begin() + static_cast<ptrdiff_t>(next * all.d),
                          all.x.begin() + static_cast<ptrdiff_t>((next + counts[r]) * all.d));
        next += counts[r];
    }
    ASSERT_EQ(next, all.n);
    std::vector<std::thread> threads;
    for (int r = 0; r < size; ++r)
        threads.emplace_back([&, r] {
            ThreadCollective comm(exchange, r, size);
            body(r, parts[static_cast<size_t>(r)], offsets[static_cast<size_t>(r)], comm);
        });
    for (auto &t : threads)
        t.join();
}

}  // namespace

TEST(KmeansSplit, GeneratedShareIsTheSliceOfTheWholeStream)
{
    const Blobs whole = generate_blobs(1000, 3, 4, 2.0, 7);
    const Blobs part = generate_blobs(1000, 3, 4, 2.0, 7, 337, 401);
    EXPECT_EQ(part.centres, whole.centres);
    ASSERT_EQ(part.points.n, 401u);
    for (uint64_t i = 0; i < part.points.x.size(); ++i)
        ASSERT_EQ(part.points.x[i], whole.points.x[337 * 3 + i]) << i;
    EXPECT_EQ(generate_blobs(1000, 3, 4, 2.0, 7, 990, 50).points.n, 10u);  // clipped at the end
}

TEST(KmeansSplit, ShareOfABinaryOrTextFileIsItsSlice)
{
    const Blobs b = generate_blobs(300, 2, 3, 1.0, 5);
    for (const char *name : {"split_points.bin", "split_points.csv"}) {
        const std::string path = testing::TempDir() + name;
        std::string error;
        ASSERT_TRUE(write_points(path, b.points, error)) << error;
        uint64_t n = 0;
        uint32_t d = 0;
        ASSERT_TRUE(scan_points(path, n, d, error)) << error;
        EXPECT_EQ(n, 300u);
        EXPECT_EQ(d, 2u);
        Points share;
        ASSERT_TRUE(read_points_share(path, 120, 100, share, error)) << error;
        ASSERT_EQ(share.n, 100u);
        for (uint64_t i = 0; i < share.x.size(); ++i)
            ASSERT_EQ(share.x[i], b.points.x[240 + i]) << name << " " << i;
        std::remove(path.c_str());
    }
}

TEST(KmeansSplit, BinaryShareOfADamagedFileIsRefused)
{
    const Blobs b = generate_blobs(50, 2, 2, 1.0, 5);
    const std::string path = testing::TempDir() + "split_damaged.bin";
    std::string error;
    ASSERT_TRUE(write_points(path, b.points, error)) << error;
    ASSERT_EQ(truncate(path.c_str(), 24 + 49 * 16), 0);
    Points share;
    EXPECT_FALSE(read_points_share(path, 10, 10, share, error));
    EXPECT_NE(error.find("truncated or damaged"), std::string::npos) << error;
    std::remove(path.c_str());
}

TEST(KmeansSplit, FingerprintDoesNotDependOnTheSplit)
{
    const Blobs b = generate_blobs(500, 3, 4, 1.0, 9);
    const InputFingerprint single = fingerprint_of(b.points, 4, 9);
    std::vector<InputFingerprint> got(3);
    on_shares(b.points, {100, 0, 400}, [&](int r, const Points &p, uint64_t offset, Collective &comm) {
        ASSERT_EQ(fingerprint_of(PointShare{p, offset, 500}, 4, 9, comm, got[static_cast<size_t>(r)]), 0);
    });
    for (const InputFingerprint &f : got) {
        EXPECT_EQ(f.points_hash, single.points_hash);
        EXPECT_EQ(f.n, 500u);
    }
    Points changed = b.points;
    changed.x[123] += 1e-9;
    EXPECT_NE(fingerprint_of(changed, 4, 9).points_hash, single.points_hash);
}

// The split run is the same algorithm: on well-separated blobs every process ends with the
// single process's centroids (to rounding), the same iterations, and labels that are the
// single run's labels of its points.
TEST(KmeansSplit, LloydOverThreeSharesMatchesOneProcess)
{
    const Blobs b = generate_blobs(3000, 2, 6, 0.5, 11);
    LloydSettings settings;
    settings.k = 6;
    settings.max_iter = 50;
    IterationState one;
    LloydResult one_result;
    ASSERT_EQ(reference_kmeans(b.points, settings, 11, one, one_result), 0);
    const IterationState first = initial_state(b.points, 6, 11);

    std::vector<IterationState> init(3), end(3);
    std::vector<std::vector<int32_t>> labels(3);
    const std::vector<uint64_t> counts = {1000, 700, 1300};
    on_shares(b.points, counts, [&](int r, const Points &p, uint64_t offset, Collective &comm) {
        const PointShare share{p, offset, 3000};
        ASSERT_EQ(initial_state(share, 6, 11, comm, init[static_cast<size_t>(r)]), 0);
        LloydResult result;
        ASSERT_EQ(reference_kmeans(share, settings, 11, end[static_cast<size_t>(r)], result, comm), 0);
        labels[static_cast<size_t>(r)] = result.labels;
    });
    uint64_t at = 0;
    for (size_t r = 0; r < 3; ++r) {
        // k-means++ picks the same points: its centres are copies of data points.
        EXPECT_EQ(init[r].centroids, first.centroids) << "rank " << r;
        EXPECT_EQ(init[r].rng_state, first.rng_state);
        EXPECT_EQ(end[r].centroids, end[0].centroids) << "every process holds the same bits";
        EXPECT_EQ(end[r].iteration, one.iteration);
        ASSERT_EQ(end[r].centroids.size(), one.centroids.size());
        for (size_t i = 0; i < one.centroids.size(); ++i)
            EXPECT_NEAR(end[r].centroids[i], one.centroids[i], 1e-9 * (1 + std::fabs(one.centroids[i])));
        EXPECT_NEAR(end[r].inertia, one.inertia, 1e-9 * one.inertia);
        ASSERT_EQ(labels[r].size(), counts[r]);
        for (uint64_t i = 0; i < counts[r]; ++i)
            ASSERT_EQ(labels[r][i], one_result.labels[at + i]) << "rank " << r << " point " << i;
        at += counts[r];
    }
}

TEST(KmeansSplit, ToleranceCombinesTheSharesVariances)
{
    const Blobs b = generate_blobs(999, 4, 3, 3.0, 2);
    const double single = absolute_tolerance(b.points, 1e-4);
    std::vector<double> got(3, 0.0);
    on_shares(b.points, {1, 500, 498}, [&](int r, const Points &p, uint64_t offset, Collective &comm) {
        ASSERT_EQ(absolute_tolerance(PointShare{p, offset, 999}, 1e-4, comm, got[static_cast<size_t>(r)]), 0);
    });
    for (double g : got)
        EXPECT_NEAR(g, single, 1e-12 * single);
    EXPECT_EQ(got[0], got[2]);
}
