// SPDX-License-Identifier: LGPL-2.1-or-later
// One directory tier of the checkpoint engine: the node-local disk, the remote file system, or
// any further directory. The engine chains them in order: the first receives the regions the
// host tier flushes, each later one copies the complete versions of the one before it. A
// DiskTier holds what is particular to its directory (path, write options, bandwidth cap) and
// its copy queue; the engine's lock guards the queue, and the file work runs without it.
#pragma once

#include "ckpt_backend/core/durable_file.h"
#include "ckpt_backend/core/manifest.h"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hetpu::ckpt {

class DiskTier {
public:
    // `label` names the tier in errors ("local tier"); bandwidth in bytes/s, 0: unlimited.
    DiskTier(std::string label, std::string dir, WriteOptions options, std::uint64_t bandwidth);
    DiskTier(const DiskTier &) = delete;
    DiskTier &operator=(const DiskTier &) = delete;
    ~DiskTier();

    const std::string &label() const { return label_; }
    const std::string &dir() const { return dir_; }
    const WriteOptions &options() const { return options_; }

    // Checks the directory is writable and removes temporaries of dead writers. With
    // `exclusive`, first locks it for this process (an -EBUSY Error when another run holds it):
    // another live run's temporaries are not ours to judge.
    void open(bool exclusive);
    // Writes one region file of a version durably (checksum computed by the caller).
    void write_region(const std::string &file, const void *data, std::uint64_t size) const;
    // Copies a version complete on `from` onto this tier: its region files, then its manifest,
    // within the bandwidth cap.
    void copy_version(const DiskTier &from, const Manifest &m) const;
    // Keeps the newest `keep` complete versions of `name` (0: all); a version for which
    // `still_needed` is true stays. Failures are left for the next pass.
    void apply_retention(const std::string &name, int keep,
                         const std::function<bool(std::int64_t)> &still_needed) const;
    // Removes region files without a manifest (a crash between data and manifest).
    void remove_orphans(const std::string &name) const;

    // Copy queue: versions complete on the previous tier, waiting to be copied here. Guarded
    // by the engine's lock; `wake` is notified when one is queued or the engine stops.
    std::deque<std::pair<std::string, std::int64_t>> queue;
    std::size_t in_flight = 0;
    std::condition_variable wake;
    bool idle() const { return queue.empty() && in_flight == 0; }

private:
    // Sleeps so that `bytes` written since `since` stay within the bandwidth cap.
    void throttle(std::uint64_t bytes, std::chrono::steady_clock::time_point since) const;

    std::string label_, dir_;
    WriteOptions options_;
    std::uint64_t bandwidth_;
    int lock_fd_ = -1;  // flock on the directory while the engine lives (exclusive tiers)
};

}  // namespace hetpu::ckpt
