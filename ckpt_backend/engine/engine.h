// SPDX-License-Identifier: LGPL-2.1-or-later
// The multi-tier checkpoint engine (no StarPU): host cache arena -> node-local directory ->
// remote directory, with background flush threads per tier boundary, restore-hint driven
// eviction and prefetch, and crash-consistent versions on the disk tiers.
//
// A checkpoint version is a list of regions. capture() copies one region into the host arena
// (the only time the caller is blocked) and queues it for flushing; flush threads write it to
// the local tier (checksum, temp name, fsync, rename) and, when every region of the version is
// there, the manifest; other threads copy complete versions on to the remote tier. Restores
// read from the fastest tier holding the region; regions hinted for restore are prefetched
// into the arena in hint order without evicting anything needed sooner.
//
// Thread safety: every public method may be called from any thread. Errors are thrown as
// ckpt::Error (-errno and a message).
#pragma once

#include "ckpt_backend/core/arena.h"
#include "ckpt_backend/core/manifest.h"
#include "ckpt_backend/core/region_state.h"
#include "ckpt_backend/engine/config.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace hetpu::ckpt {

enum class Tier { Host = 0, Local = 1, Remote = 2 };

struct RegionSpec {
    std::string name;
    std::uint64_t size;
};

struct EngineStats {
    std::uint64_t captured_bytes = 0, written_through_bytes = 0;
    std::uint64_t restored_from_host_bytes = 0, restored_from_disk_bytes = 0;
    std::uint64_t prefetched_bytes = 0, evicted_bytes = 0, flushed_bytes = 0;
    std::uint64_t capture_waits = 0;  // captures that waited for a flush to free space
    double capture_lock_wait_max_s = 0, capture_lock_wait_total_s = 0;  // time to get the engine lock
};

class Engine {
public:
    // Checks the tier directories and locks the local one (an -EBUSY Error when another run
    // holds it), then starts the threads.
    static std::unique_ptr<Engine> create(const EngineConfig &config);
    ~Engine();
    Engine(const Engine &) = delete;
    Engine &operator=(const Engine &) = delete;

    // Declares version `version` of checkpoint `name` with its regions (before capturing).
    void begin(const std::string &name, std::int64_t version, const std::vector<RegionSpec> &regions);
    // Copies region `index` (size as declared) from src; blocks only for the copy, or until a
    // flush frees room when the host arena is full of unflushed data.
    // A failed write-through is thrown here and also reported by wait() and drain().
    void capture(const std::string &name, std::int64_t version, std::size_t index, const void *src);
    // Blocks until the version is complete on `tier` (Host: captured).
    void wait(const std::string &name, std::int64_t version, Tier tier);
    // Copies region `index` of the version into dst (dst_size must equal the region's size),
    // verifying the checksum when it comes from a disk tier.
    void restore(const std::string &name, std::int64_t version, std::size_t index, void *dst, std::uint64_t dst_size);
    // Region sizes and names of a version (from memory, else from the newest disk manifest).
    std::vector<RegionSpec> describe(const std::string &name, std::int64_t version);
    // The order in which versions of `name` will be restored (replaces earlier hints); a
    // restore of a version consumes its first occurrence.
    void prefetch_hint(const std::string &name, const std::vector<std::int64_t> &order);
    // Newest version restorable now (captured in memory, or complete on a disk tier); an
    // -ENOENT Error when there is none.
    std::int64_t latest(const std::string &name);
    // Drains all flushes; throws the first flush error if any occurred.
    void drain();
    EngineStats stats();
    const EngineConfig &config() const { return config_; }
    // Bytes of the host arena usable now (grows during incremental initialisation).
    std::uint64_t host_ready_bytes();

private:
    int dir_lock_fd_ = -1;  // flock on the local directory, held while the engine lives
    using Key = std::pair<std::string, std::int64_t>;
    struct Version {
        std::uint64_t flush_order = 0;
        std::vector<RegionRecord> regions;
        std::vector<long long> host_offset;  // -1: not in the host arena
        std::size_t captured = 0, on_local = 0;
        bool declared_in_memory = true;  // false: known from a disk manifest only
        bool checksums = true;           // the region records carry checksums
        bool local_complete = false, remote_complete = false;
        int error = 0;
        std::string error_message;
    };
    struct Cached {
        Key key;
        std::size_t index;
        std::uint64_t size;
        RegionLifecycle life;
        int pins = 0;
        std::uint64_t flush_order;
    };

    explicit Engine(const EngineConfig &config);
    void start();
    void stop();

    Version *find_locked(const Key &key, bool load_from_disk);
    std::size_t rank_locked(const Key &key) const;
    // Makes room for `size` bytes; returns the offset, or -1 when the caller must fall back
    // (write through / wait). keep_rank_below as in choose_score_victims.
    long long allocate_locked(std::uint64_t size, std::size_t keep_rank_below, bool allow_fifo_eviction);
    void evict_locked(std::size_t offset);
    void persist_region(const Key &key, std::size_t index, const void *data, std::uint64_t size,
                        std::uint64_t *checksum);
    void region_on_local_locked(std::unique_lock<std::mutex> &lock, const Key &key, Version &v);
    bool on_remote_or_done(const std::string &name, std::int64_t version);
    void apply_retention(const std::string &dir, const std::string &name);
    void record_error_locked(Version &v, const Error &e);

    void step_aside_for_captures();
    void wait_state(std::unique_lock<std::mutex> &lock);
    void notify_state();  // lock not held: wakes callers waiting on cv_ and the prefetch thread
    void flush_loop();
    void remote_loop();
    void prefetch_loop();
    void touch_loop();

    EngineConfig config_;
    WriteOptions local_opts_, remote_opts_;
    char *host_base_ = nullptr;
    std::unique_ptr<Arena> arena_;

    std::mutex mu_;
    // Separate wake-ups, so that a capture wakes one flush thread and nothing else: waking
    // the prefetch or remote threads on every capture costs the application CPU time.
    std::condition_variable cv_;  // state changes, for waiting callers (wait, restore, room)
    std::condition_variable flush_cv_, remote_cv_, prefetch_cv_;
    int state_waiters_ = 0;
    std::map<Key, Version> versions_;
    std::map<std::size_t, Cached> cached_;  // host arena contents by offset
    std::map<std::string, std::deque<std::int64_t>> hints_;
    std::deque<std::pair<Key, std::size_t>> flush_queue_;
    std::deque<Key> remote_queue_;
    std::size_t flushes_in_flight_ = 0, remote_in_flight_ = 0;
    std::uint64_t next_flush_order_ = 0;
    int first_error_ = 0;
    std::string first_error_message_;
    EngineStats stats_;
    bool stopping_ = false;
    std::atomic<int> active_copies_{0}, active_prefetches_{0};

    std::vector<std::thread> threads_;
};

}  // namespace hetpu::ckpt
