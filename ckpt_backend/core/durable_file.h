// SPDX-License-Identifier: LGPL-2.1-or-later
// Crash-safe file writes for the persistent tiers: a file either exists with its complete
// contents or does not exist under its final name. The bytes go to a temporary name in the
// same directory, are fsynced, renamed over the final name, and the directory is fsynced so
// the rename itself survives a power loss. Errors are thrown as ckpt::Error (-errno and a
// message naming the path); the temporary file is removed and nothing already there is touched.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "ckpt_backend/core/ckpt_error.h"

namespace hetpu::ckpt {

struct WriteOptions {
    // Drop the written pages from the page cache after fsync, so a later read really comes
    // from the device (benchmarks measure the tier, not the page cache).
    bool drop_page_cache = false;
    // Refuse the write when it would leave the file system with fewer free bytes than this
    // (a size limit that simulates a full disk without root; 0 = off).
    unsigned long long simulated_capacity = 0;
    // Called between chunks of a large write (flush threads use it to step aside while the
    // application is copying a checkpoint into the cache: both need memory bandwidth).
    std::function<void()> between_chunks;
};

// Bytes written per write() call, and the granularity at which between_chunks runs.
constexpr std::size_t kWriteChunk = 256u << 10;

void write_file_durably(const std::string &dir, const std::string &file, const void *data, std::size_t size,
                        const WriteOptions &opts);
// Reads exactly `size` bytes; an -EIO Error when the file is shorter.
void read_file_exact(const std::string &path, void *data, std::size_t size);
// fsync on a directory (makes renames and unlinks in it durable).
void sync_directory(const std::string &dir);
// Sum of the sizes of regular files directly in dir (for the simulated capacity).
unsigned long long directory_bytes(const std::string &dir);

}  // namespace hetpu::ckpt
