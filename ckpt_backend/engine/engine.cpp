// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/engine/engine.h"

#include "ckpt_backend/core/eviction.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hetpu::ckpt {

namespace {

constexpr std::size_t kArenaAlignment = 4096;

// Flush and touch threads run at a lower priority than the application: when the
// application thread wakes up to copy a checkpoint in, it preempts a flush instead of
// waiting for the flush's time slice (measured: 3-6 ms tails on a loaded 2-core node
// without this).

}  // namespace

Engine::Engine(const EngineConfig &config) : config_(config)
{
    // Concurrency control (seed, HiPC'22, applied to flushes): a flush steps aside between
    // 256 KiB chunks while the application is copying a checkpoint in, so the copy that blocks
    // the application gets the memory bandwidth.
    WriteOptions local;
    local.between_chunks = [this] { step_aside_for_captures(); };
    local.drop_page_cache = config.drop_page_cache;
    local.simulated_capacity = config.local_capacity;
    disks_.push_back(std::make_unique<DiskTier>("local tier", config.local_dir, local, 0));
    if (!config.remote_dir.empty()) {
        WriteOptions remote;
        remote.drop_page_cache = config.drop_page_cache;
        remote.simulated_capacity = config.remote_capacity;
        disks_.push_back(std::make_unique<DiskTier>("remote tier", config.remote_dir, remote, config.remote_bandwidth));
    }
}

std::unique_ptr<Engine> Engine::create(const EngineConfig &config, std::unique_ptr<DeviceMemory> devices)
{
    std::unique_ptr<Engine> e(new Engine(config));
    if (config.device.enabled() && devices && devices->device_count() > 0)
        e->devices_ = std::move(devices);
    e->start();  // on an error, ~Engine stops what start() began
    return e;
}

void Engine::start()
{
    for (std::size_t i = 0; i < disks_.size(); ++i)
        disks_[i]->open(i == 0);  // one run per node-local directory
    if (config_.host_bytes > 0) {
        const std::size_t cap = (config_.host_bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
        void *p = ::mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            int err = errno;
            throw Error(-err, "cannot map the " + std::to_string(cap) + "-byte host cache: " + std::strerror(err));
        }
        ::madvise(p, cap, MADV_HUGEPAGE);  // fewer faults while touching; harmless if refused
        host_base_ = static_cast<char *>(p);
        // Incremental initialisation: the arena grows as the touch thread maps pages, and
        // captures use what is ready instead of waiting for all of it.
        arena_ = std::make_unique<Arena>(cap, config_.host_incremental_init ? 0 : cap, kArenaAlignment);
        if (!config_.host_incremental_init)
            std::memset(host_base_, 0, cap);
    }
    for (std::size_t tier = 1; tier < disks_.size(); ++tier)
        catch_up(tier);
    try {
        for (int i = 0; i < config_.flush_threads; ++i)
            threads_.emplace_back(&Engine::flush_loop, this);
        for (std::size_t tier = 1; tier < disks_.size(); ++tier)
            for (int i = 0; i < config_.flush_threads; ++i)
                threads_.emplace_back(&Engine::copy_loop, this, tier);
        if (arena_ && config_.prefetch)
            threads_.emplace_back(&Engine::prefetch_loop, this);
        if (arena_ && config_.host_incremental_init)
            threads_.emplace_back(&Engine::touch_loop, this);
        if (devices_)
            start_devices();
    } catch (const std::system_error &e) {
        stop();
        throw Error(-EAGAIN, std::string("cannot start checkpoint threads: ") + e.what());
    }
}

Engine::~Engine()
{
    stop();  // the local tier's DiskTier releases the directory afterwards
}

void Engine::stop()
{
    {
        std::unique_lock<std::mutex> lock(mu_);
        // Flushes finish first: the data was promised durable.
        while (!(device_flush_queue_.empty() && device_flushes_in_flight_ == 0 && flush_queue_.empty() &&
                 flushes_in_flight_ == 0 && disk_copies_idle_locked()))
            wait_state(lock);
        stopping_ = true;
    }
    cv_.notify_all();
    device_cv_.notify_all();
    device_memory_cv_.notify_all();
    device_prefetch_cv_.notify_all();
    flush_cv_.notify_all();
    for (auto &disk : disks_)
        disk->wake.notify_all();
    prefetch_cv_.notify_all();
    for (std::thread &t : threads_)
        t.join();
    threads_.clear();
    stop_devices();
    if (host_base_) {
        ::munmap(host_base_, arena_->capacity());
        host_base_ = nullptr;
    }
}

std::uint64_t Engine::host_ready_bytes()
{
    std::lock_guard<std::mutex> lock(mu_);
    return arena_ ? arena_->usable() : 0;
}

void Engine::wait_state(std::unique_lock<std::mutex> &lock)
{
    ++state_waiters_;
    cv_.wait(lock);
    --state_waiters_;
}

void Engine::notify_state()
{
    cv_.notify_all();
    prefetch_cv_.notify_one();
    device_prefetch_cv_.notify_one();
}

EngineStats Engine::stats()
{
    std::lock_guard<std::mutex> lock(mu_);
    EngineStats s = stats_;
    s.device_caches_growing = devices_growing_;
    return s;
}

// ---------------------------------------------------------------------------------------
// Bookkeeping

Engine::Version *Engine::find_locked(const Key &key, bool load_from_disk)
{
    auto it = versions_.find(key);
    if (it != versions_.end())
        return &it->second;
    if (!load_from_disk)
        return nullptr;
    // Known only on disk (written by an earlier run): take the first tier's manifest that exists.
    std::optional<Manifest> found;
    std::size_t tier = 0;
    for (; tier < disks_.size() && !found; ++tier)
        found = try_read_manifest(disks_[tier]->dir(), key.first, key.second);
    if (!found)
        return nullptr;
    --tier;
    const bool local = tier == 0;
    const Manifest &m = *found;
    Version v;
    v.declared_in_memory = false;
    v.regions = m.regions;
    v.checksums = m.checksums;
    v.host_offset.assign(m.regions.size(), -1);
    v.device_staged.assign(m.regions.size(), false);
    v.captured = v.on_first_disk = local ? m.regions.size() : 0;
    v.staged = v.captured;
    v.complete_on_disks = 1u << tier;
    v.flush_order = 0;  // older than anything this run writes
    return &versions_.emplace(key, std::move(v)).first->second;
}

std::size_t Engine::rank_locked(const Key &key) const
{
    auto it = hints_.find(key.first);
    if (it == hints_.end())
        return kNoHint;
    auto pos = std::find(it->second.begin(), it->second.end(), key.second);
    return pos == it->second.end() ? kNoHint : static_cast<std::size_t>(pos - it->second.begin());
}

void Engine::record_error_locked(Version &v, const Error &e)
{
    if (!v.error) {
        v.error = e.code();
        v.error_message = e.what();
    }
    if (!first_error_) {
        first_error_ = e.code();
        first_error_message_ = e.what();
    }
}

void Engine::evict_locked(std::size_t offset)
{
    auto it = cached_.find(offset);
    it->second.life.advance(RegionState::Evictable);
    stats_.evicted_bytes += it->second.size;
    auto v = versions_.find(it->second.key);
    if (v != versions_.end())
        v->second.host_offset[it->second.index] = -1;
    arena_->release(offset);
    cached_.erase(it);
}

long long Engine::allocate_locked(std::uint64_t size, std::size_t keep_rank_below, bool allow_fifo)
{
    if (!arena_ || arena_->rounded(size) > arena_->capacity())
        return -1;
    for (;;) {
        if (auto off = arena_->allocate(size))
            return static_cast<long long>(*off);
        std::vector<LayoutBlock> layout;
        for (const Arena::Block &b : arena_->layout()) {
            LayoutBlock lb;
            lb.offset = b.offset;
            lb.size = b.size;
            lb.free = b.free;
            if (!b.free) {
                const Cached &c = cached_.at(b.offset);
                lb.evictable = may_evict(c.life.state()) && c.pins == 0;
                lb.flush_order = c.flush_order;
                lb.prefetch_rank = rank_locked(c.key);
            }
            layout.push_back(lb);
        }
        const std::size_t need = arena_->rounded(size);
        EvictionChoice choice = config_.eviction == EvictionPolicy::Score || !allow_fifo
                                    ? choose_score_victims(layout, need, keep_rank_below)
                                    : choose_fifo_victims(layout, need);
        if (!choice.possible || choice.victims.empty())
            return -1;
        for (std::size_t off : choice.victims)
            evict_locked(off);
    }
}

// ---------------------------------------------------------------------------------------
// Checkpoint

void Engine::begin(const std::string &name, std::int64_t version, const std::vector<RegionSpec> &regions)
{
    check_name(name, "checkpoint name");
    if (version < 0)
        throw Error(-EINVAL, "checkpoint version must be >= 0");
    if (regions.empty())
        throw Error(-EINVAL, "checkpoint '" + name + "' has no regions (protect some data first)");
    for (const RegionSpec &r : regions)
        check_name(r.name, "region name");
    std::lock_guard<std::mutex> lock(mu_);
    const Key key{name, version};
    auto it = versions_.find(key);
    if (it != versions_.end() && it->second.declared_in_memory)
        throw Error(-EEXIST, "checkpoint '" + name + "' version " + std::to_string(version) +
                                 " was already taken in this run (use a new version number)");
    if (it != versions_.end() && it->second.copy_queued && !it->second.on_disk(disks_.size() - 1) && !it->second.error)
        throw Error(-EBUSY, "checkpoint '" + name + "' version " + std::to_string(version) +
                                " of an earlier run is being copied to the remote tier; wait for it "
                                "(hetpu_ckpt_wait REMOTE) or use a new version number");
    if (it != versions_.end()) {
        // Re-taking a version known from an earlier run: drop its cached (prefetched) copies.
        for (long long off : it->second.host_offset) {
            if (off < 0)
                continue;
            const Cached &c = cached_.at(static_cast<std::size_t>(off));
            if (!may_evict(c.life.state()) || c.pins > 0)
                throw Error(-EBUSY, "version " + std::to_string(version) + " of '" + name +
                                        "' is being prefetched or restored; retry");
        }
        for (long long off : it->second.host_offset)
            if (off >= 0)
                evict_locked(static_cast<std::size_t>(off));
    }
    Version v;
    v.checksums = config_.checksums;
    v.flush_order = ++next_flush_order_;
    for (std::size_t i = 0; i < regions.size(); ++i)
        v.regions.push_back({regions[i].name, regions[i].size, 0, region_file_name(name, version, i)});
    v.host_offset.assign(regions.size(), -1);
    v.device_staged.assign(regions.size(), false);
    versions_[key] = std::move(v);
}

void Engine::persist_region(const Key &key, std::size_t index, const void *data, std::uint64_t size,
                            std::uint64_t *checksum)
{
    const DiskTier &first = *disks_.front();
    *checksum = config_.checksums ? checksum_of(data, size, first.options().between_chunks) : 0;
    first.write_region(region_file_name(key.first, key.second, index), data, size);
}

void Engine::capture(const std::string &name, std::int64_t version, std::size_t index, const void *src)
{
    capture_impl(name, version, index, src, nullptr);
}

void Engine::capture_impl(const std::string &name, std::int64_t version, std::size_t index, const void *src,
                          const std::function<void()> *captured_locked)
{
    const Key key{name, version};
    const auto asked = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mu_);
    const double lock_wait = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
    stats_.capture_lock_wait_total_s += lock_wait;
    stats_.capture_lock_wait_max_s = std::max(stats_.capture_lock_wait_max_s, lock_wait);
    Version *v = find_locked(key, false);
    if (!v || !v->declared_in_memory)
        throw Error(-ENOENT, "checkpoint '" + name + "' version " + std::to_string(version) + " was not begun");
    if (index >= v->regions.size() || v->host_offset[index] != -1)
        throw Error(-EINVAL, "region index " + std::to_string(index) + " is out of range or captured twice");
    const std::uint64_t size = v->regions[index].size;
    long long off = -1;
    for (;;) {
        off = allocate_locked(size, 0, true);
        if (off >= 0)
            break;
        // No room: while the arena is still being initialised, or when the region can never
        // fit, write through to the next tier rather than wait; otherwise wait for a flush.
        const bool initialising = arena_ && arena_->usable() < arena_->capacity();
        const bool never_fits = !arena_ || arena_->rounded(size) > arena_->capacity();
        if (initialising || never_fits)
            break;
        ++stats_.capture_waits;
        wait_state(lock);
        v = find_locked(key, false);
    }
    if (off < 0) {
        lock.unlock();
        std::uint64_t sum = 0;
        std::optional<Error> failed;
        try {
            persist_region(key, index, src, size, &sum);
        } catch (const Error &e) {
            failed = e;  // recorded on the version first: wait() and drain() report it too
        }
        lock.lock();
        v = find_locked(key, false);
        v->regions[index].checksum = sum;
        ++v->captured;
        if (!v->device_staged[index])
            ++v->staged;
        if (captured_locked)
            (*captured_locked)();
        stats_.captured_bytes += size;
        stats_.written_through_bytes += size;
        if (failed)
            record_error_locked(*v, *failed);
        region_on_first_disk_locked(lock, key, *v);
        lock.unlock();
        notify_state();
        if (disks_.size() > 1)
            disks_[1]->wake.notify_one();
        if (failed)
            throw *failed;
        return;
    }
    cached_.emplace(static_cast<std::size_t>(off),
                    Cached{key, index, size, RegionLifecycle(RegionState::Writing), 0, v->flush_order});
    v->host_offset[index] = off;
    ++active_copies_;
    lock.unlock();
    std::memcpy(host_base_ + off, src, size);
    lock.lock();
    --active_copies_;
    cached_.at(static_cast<std::size_t>(off)).life.advance(RegionState::Cached);
    v = find_locked(key, false);
    ++v->captured;
    if (!v->device_staged[index])
        ++v->staged;
    if (captured_locked)
        (*captured_locked)();
    stats_.captured_bytes += size;
    flush_queue_.emplace_back(key, index);
    const bool someone_waits = state_waiters_ > 0;
    lock.unlock();
    flush_cv_.notify_one();
    if (someone_waits)
        cv_.notify_all();  // a restore or wait() on this version
}

}  // namespace hetpu::ckpt
