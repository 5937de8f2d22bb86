// SPDX-License-Identifier: LGPL-2.1-or-later
// Per-version manifest of a persistent tier: which regions a checkpoint version holds, their
// sizes and xxHash (XXH3-64) checksums. A version exists on a tier exactly when its manifest
// does; the manifest is written (durably, see durable_file.h) only after every region file of
// the version is durable, and it carries a checksum of its own text, so a crash at any
// moment leaves either the complete version or no version: latest_complete() skips anything
// torn, partial or unreadable.
//
// Files in a tier directory:  <name>.v<version>.<index>.dat   region data
//                             <name>.v<version>.manifest      the manifest
#pragma once

#include "ckpt_backend/core/durable_file.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetpu::ckpt {

struct RegionRecord {
    std::string region;      // region name given to protect()
    std::uint64_t size = 0;  // bytes
    std::uint64_t checksum = 0;
    std::string file;  // data file name inside the tier directory
};

struct Manifest {
    std::string name;
    std::int64_t version = 0;
    bool checksums = true;  // false: checksum fields are 0 and not verified
    std::vector<RegionRecord> regions;
};

std::uint64_t checksum_of(const void *data, std::size_t size);
// The same checksum computed in kWriteChunk pieces, calling between_chunks in between.
std::uint64_t checksum_of(const void *data, std::size_t size, const std::function<void()> &between_chunks);
// Names and region names: letters, digits, '_', '-', '.', 1..128 chars (they become file
// names). Returns an empty string when valid, else what is wrong.
std::string invalid_name_reason(const std::string &name);
std::string region_file_name(const std::string &name, std::int64_t version, std::size_t index);
std::string manifest_file_name(const std::string &name, std::int64_t version);

std::string serialize(const Manifest &m);
// Parses manifest text; -EBADMSG with the line number in *error when malformed or when the
// self checksum does not match (a torn manifest).
int parse_manifest(const std::string &text, Manifest *out, std::string *error);

int write_manifest(const std::string &dir, const Manifest &m, const WriteOptions &opts, std::string *error);
int read_manifest(const std::string &dir, const std::string &name, std::int64_t version, Manifest *out,
                  std::string *error);
// Reads region `index` into dst (which has record.size bytes) and verifies its checksum when
// the manifest has them: -EBADMSG on mismatch.
int read_region(const std::string &dir, const Manifest &m, std::size_t index, void *dst, std::string *error);

// Versions of `name` with an intact manifest whose region files exist with the recorded
// sizes, ascending. verify_data also re-reads every file and checks its checksum.
std::vector<std::int64_t> complete_versions(const std::string &dir, const std::string &name, bool verify_data);
std::optional<std::int64_t> latest_complete(const std::string &dir, const std::string &name, bool verify_data);
// Removes a version: the manifest first (the version stops existing atomically), then its
// data files; also sweeps temporary files left by a crash. Returns 0 or -errno.
int remove_version(const std::string &dir, const std::string &name, std::int64_t version, std::string *error);

}  // namespace hetpu::ckpt
