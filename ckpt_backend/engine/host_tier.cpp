// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/engine/host_tier.h"

#include "ckpt_backend/core/eviction.h"
#include "ckpt_backend/engine/chain.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <sys/mman.h>

namespace hetpu::ckpt {

namespace {

constexpr std::size_t kArenaAlignment = 4096;
constexpr std::size_t kTouchChunk = 4u << 20;

}  // namespace

HostTier::HostTier(std::uint64_t bytes, bool incremental_init)
    : MemoryTier(Tier::Host, "host tier"), bytes_(bytes), incremental_init_(incremental_init)
{}

HostTier::~HostTier() { detach(); }

void HostTier::attach(Chain &chain, std::size_t position)
{
    join(chain, position);
    if (bytes_ == 0)
        return;
    const std::size_t cap = (bytes_ + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    void *p = ::mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        int err = errno;
        throw Error(-err, "cannot map the " + std::to_string(cap) + "-byte host cache: " + std::strerror(err));
    }
    ::madvise(p, cap, MADV_HUGEPAGE);  // fewer faults while touching; harmless if refused
    base_ = static_cast<char *>(p);
    // Incremental initialisation: the arena grows as the touch thread maps pages, and
    // captures use what is ready instead of waiting for all of it.
    arena_ = std::make_unique<Arena>(cap, incremental_init_ ? 0 : cap, kArenaAlignment);
    if (!incremental_init_)
        std::memset(base_, 0, cap);
}

void HostTier::start(std::vector<std::thread> &threads)
{
    if (!arena_)
        return;
    for (int i = 0; i < chain_->config().flush_threads; ++i)
        threads.emplace_back(&HostTier::flush_loop, this, true);
    if (chain_->config().prefetch)
        threads.emplace_back(&HostTier::prefetch_loop, this);
    if (incremental_init_)
        threads.emplace_back(&HostTier::touch_loop, this);
}

void HostTier::detach()
{
    if (base_) {
        ::munmap(base_, arena_->capacity());
        base_ = nullptr;
    }
}

std::uint64_t HostTier::ready_bytes() const
{
    if (!chain_)
        return 0;
    std::lock_guard<std::mutex> lock(chain_->mu);
    return arena_ ? arena_->usable() : 0;
}

void HostTier::evict_locked(std::size_t offset)
{
    auto it = cached_.find(offset);
    it->second.life.advance(RegionState::Evictable);
    chain_->stats.evicted_bytes += it->second.size;
    offsets_.erase({it->second.key, it->second.index});
    arena_->release(offset);
    cached_.erase(it);
}

long long HostTier::allocate_locked(std::uint64_t size, std::size_t keep_rank_below, bool allow_fifo)
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
                lb.prefetch_rank = chain_->rank_locked(c.key);
            }
            layout.push_back(lb);
        }
        const std::size_t need = arena_->rounded(size);
        EvictionChoice choice = chain_->config().eviction == EvictionPolicy::Score || !allow_fifo
                                    ? choose_score_victims(layout, need, keep_rank_below)
                                    : choose_fifo_victims(layout, need);
        if (!choice.possible || choice.victims.empty())
            return -1;
        for (std::size_t off : choice.victims)
            evict_locked(off);
    }
}

void HostTier::accept(const RegionKey &rk, const void *src, const std::function<void(bool)> *on_reached)
{
    const Key &key = rk.first;
    const std::size_t index = rk.second;
    const auto asked = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(chain_->mu);
    EngineStats &stats = chain_->stats;
    const double lock_wait = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
    stats.capture_lock_wait_total_s += lock_wait;
    stats.capture_lock_wait_max_s = std::max(stats.capture_lock_wait_max_s, lock_wait);
    Version *v = &chain_->begun_locked(rk);
    if (offsets_.count(rk))
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
        ++stats.capture_waits;
        chain_->wait_state(lock);
    }
    if (off < 0) {
        lock.unlock();
        write_through(rk, src, size, on_reached);
        return;
    }
    const std::size_t at = static_cast<std::size_t>(off);
    cached_.emplace(at, Cached{key, index, size, RegionLifecycle(RegionState::Writing), 0, v->flush_order});
    offsets_[rk] = at;
    ++chain_->active_copies;
    lock.unlock();
    std::memcpy(base_ + at, src, size);
    lock.lock();
    --chain_->active_copies;
    cached_.at(at).life.advance(RegionState::Cached);
    chain_->reached_locked(lock, rk, position_);
    if (on_reached)
        (*on_reached)(true);
    stats.captured_bytes += size;
    // A capture wakes one flush thread and nothing else: waking the prefetch thread on every
    // capture costs the application CPU time.
    flushes_.push_locked(rk);
    const bool someone_waits = chain_->state_waiters > 0;
    lock.unlock();
    flushes_.wake_one();
    if (someone_waits)
        chain_->state.notify_all();  // a restore or wait() on this version
}

void HostTier::write_through(const RegionKey &rk, const void *src, std::uint64_t size,
                             const std::function<void(bool)> *on_reached)
{
    if (position_ + 1 >= chain_->size())
        throw Error(-ENOSPC, "the host cache has no room for region " + std::to_string(rk.second) +
                                 " and no tier after it to write to (configure [local] path)");
    // Counted as captured here in the critical section in which the next tier counts it.
    const std::function<void(bool)> counted = [&](bool stored) {
        chain_->stats.captured_bytes += size;
        chain_->stats.written_through_bytes += size;
        if (on_reached)
            (*on_reached)(stored);
    };
    chain_->tier(position_ + 1).accept(rk, src, &counted);
}

void HostTier::flush_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, Tier &next)
{
    const std::size_t off = offsets_.at(rk);
    ++cached_.at(off).pins;  // Cached regions are never evicted; the pin also keeps readers honest
    lock.unlock();
    // On a failed write the version is marked failed (it never becomes complete on the next
    // tier, older ones are untouched) and its bytes become evictable so the cache cannot
    // deadlock.
    bool done = false;
    const std::function<void(bool)> flushed = [&](bool stored) {
        Cached &again = cached_.at(off);
        --again.pins;
        again.life.advance(RegionState::Flushed);
        if (stored)
            chain_->stats.flushed_bytes += again.size;
        done = true;
    };
    std::optional<Error> failed;
    try {
        next.accept(rk, base_ + off, &flushed);
    } catch (const Error &e) {
        failed = e;  // recorded on the version by the next tier when it counted the region
    } catch (const std::exception &e) {
        failed = Error(-EIO, std::string("host flush: ") + e.what());
    }
    lock.lock();
    if (!done) {
        flushed(false);
        if (Version *v = chain_->find_locked(rk.first, false))
            chain_->record_error_locked(*v, failed ? *failed : Error(-EIO, "host flush: region not taken"));
    }
}

bool HostTier::holds_locked(const RegionKey &rk) const
{
    auto it = offsets_.find(rk);
    return it != offsets_.end() && is_readable(cached_.at(it->second).life.state());
}

bool HostTier::read_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, void *dst)
{
    for (;;) {
        auto it = offsets_.find(rk);
        if (it == offsets_.end())
            return false;
        const std::size_t off = it->second;
        Cached &c = cached_.at(off);
        if (!is_readable(c.life.state())) {
            chain_->wait_state(lock);  // being written or prefetched
            continue;
        }
        ++c.pins;
        const std::uint64_t size = c.size;
        lock.unlock();
        std::memcpy(dst, base_ + off, size);
        lock.lock();
        --cached_.at(off).pins;
        return true;
    }
}

void HostTier::count_restored_locked(const RegionKey &rk, std::uint64_t bytes)
{
    chain_->stats.restored_from_host_bytes += bytes;
    auto it = offsets_.find(rk);
    if (it == offsets_.end())
        return;
    Cached &c = cached_.at(it->second);
    if (c.life.state() == RegionState::Flushed)
        c.life.advance(RegionState::Ready);
    if (c.life.state() == RegionState::Ready)
        c.life.advance(RegionState::Consumed);
}

void HostTier::forget_locked(const Key &key)
{
    // Re-taking a version known from an earlier run: its cached (prefetched) copies go.
    const auto first = offsets_.lower_bound({key, 0});
    auto it = first;
    for (; it != offsets_.end() && it->first.first == key; ++it) {
        const Cached &c = cached_.at(it->second);
        if (!may_evict(c.life.state()) || c.pins > 0)
            throw Error(-EBUSY, "version " + std::to_string(key.second) + " of '" + key.first +
                                    "' is being prefetched or restored; retry");
    }
    std::vector<std::size_t> victims;
    for (auto at = first; at != it; ++at)
        victims.push_back(at->second);
    for (std::size_t off : victims)
        evict_locked(off);
}

void HostTier::prefetch_loop()
{
    // Normal priority: a prefetch is on the restore's critical path.
    std::unique_lock<std::mutex> lock(chain_->mu);
    for (;;) {
        if (chain_->stopping)
            return;
        // The first hinted region that a tier after this one holds and the arena does not.
        const Chain::HintedRegion next =
            chain_->next_hinted_region_locked([&](const Key &key, Version &v, std::size_t i) {
                return !offsets_.count({key, i}) && chain_->held_after_locked(position_, {key, i}, v);
            });
        if (next.rank == kNoHint) {
            prefetch_cv_.wait(lock);
            continue;
        }
        const RegionKey rk{next.key, next.index};
        Version &v = chain_->versions.at(next.key);
        const std::uint64_t size = v.regions[next.index].size;
        // Room without evicting anything needed sooner (keep ranks <= target's).
        const long long off = allocate_locked(size, next.rank + 1, false);
        if (off < 0) {
            prefetch_cv_.wait(lock);
            continue;
        }
        const std::size_t at = static_cast<std::size_t>(off);
        cached_.emplace(
            at, Cached{next.key, next.index, size, RegionLifecycle(RegionState::Prefetching), 0, v.flush_order});
        offsets_[rk] = at;
        ++chain_->active_prefetches;
        bool unreadable = false;
        try {
            unreadable = !chain_->read_after_locked(lock, position_, rk, base_ + at);
        } catch (const Error &) {
            unreadable = true;
        }
        --chain_->active_prefetches;
        if (unreadable) {
            // Unreadable: drop it; the restore reads the disk itself and reports the error.
            offsets_.erase(rk);
            arena_->release(at);
            cached_.erase(at);
            chain_->drop_hint_locked(next.key);
        } else {
            cached_.at(at).life.advance(RegionState::Ready);
            chain_->stats.prefetched_bytes += size;
        }
        chain_->state.notify_all();  // a restore may be waiting for this region (lock held: we loop on)
    }
}

void HostTier::touch_loop()
{
    lower_this_thread_priority();
    const std::size_t cap = arena_->capacity();
    for (std::size_t done = 0; done < cap;) {
        // Concurrency control (seed, HiPC'22): touching competes with captures for memory
        // bandwidth, so it pauses while a capture copy is running.
        if (chain_->active_copies.load() > 0) {
            std::this_thread::sleep_for(std::chrono::microseconds(50));
            continue;
        }
        {
            std::lock_guard<std::mutex> lock(chain_->mu);
            if (chain_->stopping)
                return;
        }
        const std::size_t end = std::min(cap, done + kTouchChunk);
        for (std::size_t p = done; p < end; p += 4096)
            base_[p] = 0;
        done = end;
        {
            std::lock_guard<std::mutex> lock(chain_->mu);
            arena_->grow_usable(done);
        }
        chain_->notify_state();
    }
    // Here a CUDA build registers (pins) the whole arena in one serialised step
    // (cudaHostRegister); Debian's StarPU has no CUDA, so the step is compiled out.
}

}  // namespace hetpu::ckpt
