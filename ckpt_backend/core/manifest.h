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
// names). Throws an -EINVAL Error "<what> '<name>' <what is wrong>" otherwise.
void check_name(const std::string &name, const std::string &what);
std::string region_file_name(const std::string &name, std::int64_t version, std::size_t index);
std::string manifest_file_name(const std::string &name, std::int64_t version);

std::string serialize(const Manifest &m);
// Parses manifest text; throws an -EBADMSG Error naming the line when malformed or when the
// self checksum does not match (a torn manifest).
Manifest parse_manifest(const std::string &text);

void write_manifest(const std::string &dir, const Manifest &m, const WriteOptions &opts);
// Throws an Error with the errno of the failed open (-ENOENT: no such version) or -EBADMSG.
Manifest read_manifest(const std::string &dir, const std::string &name, std::int64_t version);
// The manifest when it exists and is intact, for scans that skip the others.
std::optional<Manifest> try_read_manifest(const std::string &dir, const std::string &name, std::int64_t version);
// Reads region `index` into dst (which has record.size bytes) and verifies its checksum when
// the manifest has them: an -EBADMSG Error on mismatch.
void read_region(const std::string &dir, const Manifest &m, std::size_t index, void *dst);

// Versions of `name` with an intact manifest whose region files exist with the recorded
// sizes, ascending. verify_data also re-reads every file and checks its checksum.
std::vector<std::int64_t> complete_versions(const std::string &dir, const std::string &name, bool verify_data);
std::optional<std::int64_t> latest_complete(const std::string &dir, const std::string &name, bool verify_data);
// Checkpoint names with a manifest or a region file in dir (whatever their state).
std::vector<std::string> checkpoint_names(const std::string &dir);
// Versions of `name` with region files in dir but no intact manifest: what a crash between
// the data and the manifest leaves (never complete, never read), ascending.
std::vector<std::int64_t> orphan_versions(const std::string &dir, const std::string &name);
// Removes a version: the manifest first (the version stops existing atomically), then its
// data files; also sweeps temporary files left by a crash. Throws Error.
void remove_version(const std::string &dir, const std::string &name, std::int64_t version);

}  // namespace hetpu::ckpt
