// SPDX-License-Identifier: LGPL-2.1-or-later
// One directory tier of the checkpoint engine (a durable Tier, see tier.h): the node-local
// disk, the remote file system, or any further directory. The first durable tier of the chain
// receives the regions the memory tiers flush and writes each version's manifest once all
// its regions are there; a directory tier after a durable tier copies every version complete
// there (its own copy threads), then applies retention on both. A DiskTier holds what is
// particular to its directory (path, write options, bandwidth cap) and its copy queue; the
// chain's lock guards the queue, and the file work runs without it.
#pragma once

#include "ckpt_backend/core/durable_file.h"
#include "ckpt_backend/core/manifest.h"
#include "ckpt_backend/engine/tier.h"
#include "ckpt_backend/engine/work_queue.h"

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

class DiskTier : public Tier {
public:
    // `label` names the tier in errors ("local tier"); bandwidth in bytes/s, 0: unlimited.
    DiskTier(std::string label, std::string dir, WriteOptions options, std::uint64_t bandwidth,
             Level level = Tier::Local);
    ~DiskTier() override;

    const std::string &dir() const { return dir_; }
    const WriteOptions &options() const { return options_; }

    // Checks the directory is writable and removes temporaries of dead writers. With
    // `exclusive`, first locks it for this process (an -EBUSY Error when another run holds it):
    // another live run's temporaries are not ours to judge.
    void open(bool exclusive);
    // Writes one region file of a version durably (checksum computed by the caller).
    void write_region(const std::string &file, const void *data, std::uint64_t size) const;
    // Copies a version complete on `from` onto this tier: its region files (read back with
    // their checksums verified), then its manifest, within the bandwidth cap.
    void copy_version(const Tier &from, const Manifest &m) const;
    // Keeps the newest `keep` complete versions of `name` (0: all); a version for which
    // `still_needed` is true stays. Failures are left for the next pass.
    void apply_retention(const std::string &name, int keep,
                         const std::function<bool(std::int64_t)> &still_needed) const;
    // Removes region files without a manifest (a crash between data and manifest).
    void remove_orphans(const std::string &name) const;

    // Tier: see tier.h.
    bool durable() const override { return true; }
    // Opens the directory (locked when it is the first durable tier: one run per node-local
    // directory) and, after another directory tier, catches up with it: region files without a
    // manifest are removed on both, versions complete there but not here that retention would
    // keep are queued for copying, newest first, and retention applies.
    void attach(Chain &chain, std::size_t position) override;
    void start(std::vector<std::thread> &threads) override;
    bool idle_locked() const override { return copies_.idle_locked(); }
    void wake_all() override { copies_.wake_all(); }
    // Writes the region durably with its checksum; the version's last region writes the
    // manifest.
    void accept(const RegionKey &rk, const void *src, const std::function<void(bool)> *on_reached) override;
    void upstream_complete_locked(const Key &key) override;
    bool needs_upstream(const Key &key) const override;
    void apply_retention(const std::string &name) override;
    std::optional<Manifest> find_manifest(const Key &key) const override;
    std::optional<std::int64_t> newest_complete(const std::string &name) const override;
    void read_stored(const Manifest &m, std::size_t index, void *dst) const override;

private:
    // Sleeps so that `bytes` written since `since` stay within the bandwidth cap.
    void throttle(std::uint64_t bytes, std::chrono::steady_clock::time_point since) const;
    void catch_up(const DiskTier &from);
    void copy_loop();  // copies the versions queued from the tier before

    std::string dir_;
    WriteOptions options_;
    std::uint64_t bandwidth_;
    int lock_fd_ = -1;  // flock on the directory while the engine lives (exclusive tiers)
    Chain *chain_ = nullptr;
    std::size_t position_ = 0;
    WorkQueue<Key> copies_;  // versions complete on the tier before, to be copied here
};

}  // namespace hetpu::ckpt
