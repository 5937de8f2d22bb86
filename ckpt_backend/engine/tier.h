// SPDX-License-Identifier: LGPL-2.1-or-later
// One tier of the checkpoint engine, in the style of VELOC's modules: the engine holds an
// ordered list of tiers (fastest first: device caches, host cache, node-local directory,
// remote directory) and knows nothing of what each one is.
//
// A checkpoint region enters the chain at the first tier (accept). A memory tier keeps it and
// later hands it to the tier after it from its own flush thread (accept again, one position
// down); a durable tier stores it with a checksum and writes the version's manifest once
// every region is there. A durable tier after a durable tier copies each version complete on
// the tier before it (upstream_complete_locked). Restores ask the memory tiers in list order,
// then read the first durable tier holding the version. Each tier applies its own retention
// and eviction.
//
// Every method named *_locked runs with the chain's lock held (Chain::mu); the others are
// called without it and take it when they need it. A tier's threads and waits use the
// chain's lock and its state condition.
#pragma once

#include "ckpt_backend/core/manifest.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace hetpu::ckpt {

class Chain;
using Key = std::pair<std::string, std::int64_t>;  // checkpoint name, version
using RegionKey = std::pair<Key, std::size_t>;     // and the region's index in the version

class Tier {
public:
    // What a caller can wait for (Engine::wait, hetpu_ckpt_wait's enum). Each tier serves one
    // level; a wait for a level waits on the first tier of the list at that level or after.
    enum Level { Device = -1, Host = 0, Local = 1, Remote = 2 };

    // `label` names the tier in errors ("local tier").
    Tier(Level level, std::string label) : level_(level), label_(std::move(label)) {}
    virtual ~Tier() = default;
    Tier(const Tier &) = delete;
    Tier &operator=(const Tier &) = delete;

    Level level() const { return level_; }
    const std::string &label() const { return label_; }
    // A durable tier holds complete versions under a manifest that outlive the process: a
    // wait on it waits for the manifest, a restart finds its versions.
    virtual bool durable() const { return false; }

    // Life cycle, called in list order. attach takes the tier's resources (directories,
    // memory) and recovers what an earlier run left behind; the tiers before it are attached.
    virtual void attach(Chain &chain, std::size_t position) = 0;
    // Starts its threads into `threads` (the chain joins them after wake_all).
    virtual void start(std::vector<std::thread> &threads) { (void)threads; }
    // Nothing queued or moving to the next tier (lock held).
    virtual bool idle_locked() const { return true; }
    // Something changed that its background threads may act on (a hint, a freed region).
    virtual void notify() {}
    // The chain is stopping: wake every thread so that it sees Chain::stopping.
    virtual void wake_all() { notify(); }
    // After its threads joined: gives its memory back.
    virtual void detach() {}

    // A region enters this tier from host memory `src` (the application's buffer, or the
    // staging copy of the tier before) and is kept here or passed on before this returns.
    // `on_reached`, when set, runs under the lock in the critical section in which the region
    // counts as reached here; its argument is false when storing it failed (the error is
    // recorded on the version, then thrown).
    virtual void accept(const RegionKey &rk, const void *src, const std::function<void(bool)> *on_reached) = 0;
    // The version became complete on the (durable) tier before this one (lock held).
    virtual void upstream_complete_locked(const Key &key) { (void)key; }
    // A memory tier: copies the region into host memory dst when it holds it (without
    // counting a restore), waiting for a copy of it in progress; false when it does not.
    // The lock is released during the copy.
    virtual bool read_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, void *dst)
    {
        (void)lock, (void)rk, (void)dst;
        return false;
    }
    // A memory tier holds the region readable now (lock held).
    virtual bool holds_locked(const RegionKey &rk) const
    {
        (void)rk;
        return false;
    }
    // A restore read the region from this tier (read_locked just returned true): counts the
    // bytes in the engine's statistics, and marks what the tier keeps of it consumed.
    virtual void count_restored_locked(const RegionKey &rk, std::uint64_t bytes) { (void)rk, (void)bytes; }
    // The version is taken again in this run: drop what this tier keeps of it from earlier
    // (lock held); an -EBUSY Error while it is being read.
    virtual void forget_locked(const Key &key) { (void)key; }

    // Durable tiers. A tier that copies the versions complete on the tier before it still
    // needs this one there (its copy is pending): the tier before keeps it (lock not held).
    virtual bool needs_upstream(const Key &key) const
    {
        (void)key;
        return false;
    }
    // Keeps the configured number of complete versions of `name` (lock not held).
    virtual void apply_retention(const std::string &name) { (void)name; }
    // The version's manifest when it is complete here, the newest complete version of a name,
    // and a region read back with its checksum verified.
    virtual std::optional<Manifest> find_manifest(const Key &key) const
    {
        (void)key;
        return std::nullopt;
    }
    virtual std::optional<std::int64_t> newest_complete(const std::string &name) const
    {
        (void)name;
        return std::nullopt;
    }
    virtual void read_stored(const Manifest &m, std::size_t index, void *dst) const;

private:
    Level level_;
    std::string label_;
};

}  // namespace hetpu::ckpt
