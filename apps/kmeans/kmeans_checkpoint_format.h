// SPDX-License-Identifier: LGPL-2.1-or-later
// The bytes of a kmeans checkpoint: one IterationState plus a fingerprint of the run's input,
// in a buffer whose size depends only on k and d. Pure C++ (no StarPU), unit-tested.
//
// Layout (host byte order; a checkpoint is restarted on the node that wrote it):
//   header, kCheckpointHeaderSize bytes:
//     0  magic "HKMCKPT\0"      8  format version (u32)   12 k (u32)   16 d (u32)
//     20 iteration (u32)        24 n (u64)                32 seed (u64)
//     40 hash of the points (u64: the sum, mod 2^64, over points of XXH3-64 of the point's
//        doubles seeded with its index, so ranks holding any shares of them agree)
//     48 rng_state (u64)        56 inertia (f64)          64 shift2 (f64)
//     72 changed (u64)          80 converged (u32)        84 zero (u32)
//     88 checksum: XXH3-64 of the centroids seeded with XXH3-64 of bytes [0, 88)
//   centroids: k x d doubles.
// The header has a fixed size so that a restart can read it alone first and refuse a
// checkpoint of another k, d or data set with a clear message (the checkpoint backend would
// otherwise only see a region of the wrong size).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "apps/kmeans/kmeans_collective.h"
#include "apps/kmeans/kmeans_data.h"
#include "apps/kmeans/kmeans_lloyd.h"

namespace hetpu::kmeans {

constexpr uint32_t kCheckpointFormatVersion = 2;
constexpr size_t kCheckpointHeaderSize = 96;

// What a checkpoint must have been taken on for a restart to continue it.
struct InputFingerprint {
    uint64_t n = 0;
    uint32_t d = 0;
    uint32_t k = 0;
    uint64_t seed = 0;         // seeds k-means++ (and the generator with --generate)
    uint64_t points_hash = 0;  // see the layout: independent of how the points are shared
};

InputFingerprint fingerprint_of(const Points &p, uint32_t k, uint64_t seed);

// The fingerprint of points split across processes (collective): the same on every
// process, and the same as fingerprint_of() of all the points together. 0 or -errno.
int fingerprint_of(const PointShare &share, uint32_t k, uint64_t seed, Collective &comm, InputFingerprint &out);

// Bytes of a whole checkpoint: header + k x d doubles.
size_t checkpoint_size(uint32_t k, uint32_t d);

// Writes state (its centroids must hold fp.k x fp.d values) into out, checkpoint_size bytes.
void encode_checkpoint(const IterationState &state, const InputFingerprint &fp, unsigned char *out);

// Checks a header alone (kCheckpointHeaderSize bytes): magic, format version, and that it was
// taken on `expected`. False with a message saying what differs and what to do.
bool check_checkpoint_header(const unsigned char *header, const InputFingerprint &expected, std::string &error);

// Checks the whole buffer (header as above, then the checksum over header and centroids)
// and fills state. size must be checkpoint_size(expected.k, expected.d). On failure state is
// unchanged.
bool decode_checkpoint(const unsigned char *data, size_t size, const InputFingerprint &expected, IterationState &state,
                       std::string &error);

// The global record of a multi-rank run (file "global" in --checkpoint-dir, next to one
// directory per rank): how many ranks checkpointed and the newest version that is durable
// on every one of them. Rank 0 writes it (atomically: temporary file, rename) only after
// every rank reported that version durable, so a restart never picks a version some rank
// lacks.
std::string global_record_text(int ranks, int64_t version);
// False with a message when the text is not a global record.
bool parse_global_record(const std::string &text, int &ranks, int64_t &version, std::string &error);

}  // namespace hetpu::kmeans
