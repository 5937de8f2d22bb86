// SPDX-License-Identifier: LGPL-2.1-or-later
#include "apps/kmeans/kmeans_checkpoint_format.h"

#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace hetpu::kmeans {

std::string global_record_text(int ranks, int64_t version)
{
    return "hetpu-kmeans-global 1\nranks " + std::to_string(ranks) + "\nversion " + std::to_string(version) + "\n";
}

bool parse_global_record(const std::string &text, int &ranks, int64_t &version, std::string &error)
{
    int format = 0;
    long long v = -1;
    int r = 0;
    if (std::sscanf(text.c_str(), "hetpu-kmeans-global %d\nranks %d\nversion %lld", &format, &r, &v) != 3 ||
        format != 1 || r < 1 || v < 0) {
        error = "not a kmeans global checkpoint record (format 1)";
        return false;
    }
    ranks = r;
    version = v;
    return true;
}

namespace {

constexpr char kMagic[8] = {'H', 'K', 'M', 'C', 'K', 'P', 'T', '\0'};
constexpr size_t kChecksumOffset = 88;

template <typename T> void put(unsigned char *out, size_t offset, T v) { std::memcpy(out + offset, &v, sizeof v); }

template <typename T> T get(const unsigned char *in, size_t offset)
{
    T v;
    std::memcpy(&v, in + offset, sizeof v);
    return v;
}

// The header's hash seeds the centroids' hash: one 64-bit value covering both.
uint64_t checksum_of(const unsigned char *data, size_t size)
{
    return XXH3_64bits_withSeed(data + kCheckpointHeaderSize, size - kCheckpointHeaderSize,
                                XXH3_64bits(data, kChecksumOffset));
}

std::string describe(const InputFingerprint &f)
{
    return "k = " + std::to_string(f.k) + ", " + std::to_string(f.n) + " points x " + std::to_string(f.d) +
           " dims, seed " + std::to_string(f.seed);
}

}  // namespace

int fingerprint_of(const PointShare &share, uint32_t k, uint64_t seed, Collective &comm, InputFingerprint &out)
{
    const Points &p = share.local;
    uint64_t mine = 0;
    for (uint64_t i = 0; i < p.n; ++i)
        mine += XXH3_64bits_withSeed(&p.x[i * p.d], p.d * sizeof(double), share.offset + i);
    std::vector<uint64_t> all;
    if (int rc = comm.gather_values(mine, all); rc != 0)
        return rc;
    out = InputFingerprint{};
    out.n = share.total;
    out.d = p.d;
    out.k = k;
    out.seed = seed;
    for (uint64_t h : all)
        out.points_hash += h;  // a sum: any split of the points gives the same hash
    return 0;
}

InputFingerprint fingerprint_of(const Points &p, uint32_t k, uint64_t seed)
{
    SingleProcess single;
    InputFingerprint f;
    fingerprint_of(whole(p), k, seed, single, f);
    return f;
}

size_t checkpoint_size(uint32_t k, uint32_t d) { return kCheckpointHeaderSize + sizeof(double) * k * d; }

void encode_checkpoint(const IterationState &state, const InputFingerprint &fp, unsigned char *out)
{
    std::memset(out, 0, kCheckpointHeaderSize);
    std::memcpy(out, kMagic, sizeof kMagic);
    put<uint32_t>(out, 8, kCheckpointFormatVersion);
    put<uint32_t>(out, 12, fp.k);
    put<uint32_t>(out, 16, fp.d);
    put<uint32_t>(out, 20, state.iteration);
    put<uint64_t>(out, 24, fp.n);
    put<uint64_t>(out, 32, fp.seed);
    put<uint64_t>(out, 40, fp.points_hash);
    put<uint64_t>(out, 48, state.rng_state);
    put<double>(out, 56, state.inertia);
    put<double>(out, 64, state.shift2);
    put<uint64_t>(out, 72, state.changed);
    put<uint32_t>(out, 80, state.converged ? 1 : 0);
    std::memcpy(out + kCheckpointHeaderSize, state.centroids.data(), sizeof(double) * fp.k * fp.d);
    put<uint64_t>(out, kChecksumOffset, checksum_of(out, checkpoint_size(fp.k, fp.d)));
}

bool check_checkpoint_header(const unsigned char *header, const InputFingerprint &expected, std::string &error)
{
    if (std::memcmp(header, kMagic, sizeof kMagic) != 0) {
        error = "not a kmeans checkpoint (wrong magic): give the --checkpoint-dir of a kmeans run";
        return false;
    }
    if (const uint32_t v = get<uint32_t>(header, 8); v != kCheckpointFormatVersion) {
        error = "checkpoint format version " + std::to_string(v) + ", this kmeans reads version " +
                std::to_string(kCheckpointFormatVersion) + ": restart with the kmeans that wrote it, or start afresh";
        return false;
    }
    InputFingerprint found;
    found.k = get<uint32_t>(header, 12);
    found.d = get<uint32_t>(header, 16);
    found.n = get<uint64_t>(header, 24);
    found.seed = get<uint64_t>(header, 32);
    found.points_hash = get<uint64_t>(header, 40);
    if (found.k != expected.k || found.d != expected.d || found.n != expected.n || found.seed != expected.seed) {
        error = "the checkpoint is of a run with " + describe(found) + ", this run has " + describe(expected) +
                ": restart with the same -k, --seed and data, or start afresh without --restart";
        return false;
    }
    if (found.points_hash != expected.points_hash) {
        error = "the checkpoint was taken on other points (same size, different values: hash " +
                std::to_string(found.points_hash) + " vs " + std::to_string(expected.points_hash) +
                "): restart with the same data, or start afresh without --restart";
        return false;
    }
    return true;
}

bool decode_checkpoint(const unsigned char *data, size_t size, const InputFingerprint &expected, IterationState &state,
                       std::string &error)
{
    if (size != checkpoint_size(expected.k, expected.d)) {
        error = "checkpoint of " + std::to_string(size) + " bytes, expected " +
                std::to_string(checkpoint_size(expected.k, expected.d)) + " for k = " + std::to_string(expected.k) +
                " and d = " + std::to_string(expected.d);
        return false;
    }
    if (!check_checkpoint_header(data, expected, error))
        return false;
    if (get<uint64_t>(data, kChecksumOffset) != checksum_of(data, size)) {
        error = "the checkpoint is corrupted (checksum mismatch): restart from another version or start afresh";
        return false;
    }
    IterationState s;
    s.iteration = get<uint32_t>(data, 20);
    s.rng_state = get<uint64_t>(data, 48);
    s.inertia = get<double>(data, 56);
    s.shift2 = get<double>(data, 64);
    s.changed = get<uint64_t>(data, 72);
    s.converged = get<uint32_t>(data, 80) != 0;
    s.centroids.resize(static_cast<size_t>(expected.k) * expected.d);
    std::memcpy(s.centroids.data(), data + kCheckpointHeaderSize, sizeof(double) * s.centroids.size());
    state = std::move(s);
    return true;
}

}  // namespace hetpu::kmeans
