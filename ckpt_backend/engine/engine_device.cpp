// SPDX-License-Identifier: LGPL-2.1-or-later
// The device cache tier of the engine (see engine.h): per-device caches grown chunk by chunk,
// group captures placed by the peer schedule, the device -> host flush, and restores from
// device memory.
#include "ckpt_backend/engine/engine.h"

#include "ckpt_backend/core/cache_shrink.h"
#include "ckpt_backend/core/eviction.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace hetpu::ckpt {

void Engine::start_devices()
{
    const std::size_t n = devices_->device_count();
    const DeviceTierConfig &dc = config_.device;
    link_bw_.assign(n, std::vector<double>(n, 0.0));
    host_bw_.assign(n, 0.0);
    for (std::size_t d = 0; d < n; ++d) {
        const std::uint64_t target =
            dc.fraction > 0 ? static_cast<std::uint64_t>(dc.fraction * static_cast<double>(devices_->device_bytes(d)))
                            : dc.bytes;
        device_caches_.emplace_back(target, dc.chunk_bytes, dc.slot_bytes);
        for (std::size_t j = 0; j < n; ++j)
            if (j != d)
                link_bw_[d][j] = devices_->bandwidth(d, static_cast<int>(j));
        host_bw_[d] = devices_->bandwidth(d, kHostMemory);
    }
    device_chunks_.resize(n);
    // The ceiling of the doubling: 64 quiet spells.
    device_regrow_.assign(n, RegrowBackoff(dc.regrow_after_s, 64 * dc.regrow_after_s));
    devices_started_ = std::chrono::steady_clock::now();
    devices_growing_ = true;
    threads_.emplace_back(&Engine::device_memory_loop, this);
    threads_.emplace_back(&Engine::device_flush_loop, this);
    if (config_.prefetch)
        threads_.emplace_back(&Engine::device_prefetch_loop, this);
}

void Engine::stop_devices()
{
    if (!devices_)
        return;
    for (std::size_t d = 0; d < device_chunks_.size(); ++d)
        for (std::uintptr_t chunk : device_chunks_[d])
            if (chunk != 0)  // 0: given back under pressure already
                devices_->release(d, chunk, device_caches_[d].chunk_bytes());
    device_chunks_.clear();
    device_copies_.clear();
}

double Engine::device_clock_s() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - devices_started_).count();
}

// Incremental initialisation of the device caches: one chunk per device in turn, so every
// device has a usable cache after its first chunk instead of after the whole cache. The
// same growth takes chunks again for a cache that gave memory back, once its device is quiet.
bool Engine::grow_one_chunk()
{
    std::size_t device = 0;
    std::uint64_t bytes = 0;
    {
        std::lock_guard<std::mutex> lock(mu_);
        bool wanted = false;
        std::size_t fewest = SIZE_MAX;
        for (std::size_t d = 0; d < device_caches_.size(); ++d)
            if (device_caches_[d].chunks_wanted() > 0 && device_caches_[d].live_chunks() < fewest) {
                fewest = device_caches_[d].live_chunks();
                device = d;
                wanted = true;
            }
        if (!wanted || stopping_)
            return false;
        bytes = device_caches_[device].chunk_bytes();
    }
    const std::uintptr_t chunk = devices_->allocate(device, bytes);
    std::lock_guard<std::mutex> lock(mu_);
    DeviceCache &cache = device_caches_[device];
    RegrowBackoff &regrow = device_regrow_[device];
    if (chunk == 0) {
        cache.stop_growing();
        if (regrow.shrunk())
            regrow.pressure(device_clock_s());  // still short of memory: wait longer
        else
            ++stats_.device_chunk_refusals;  // the device is smaller than the cache asked for
    } else {
        device_chunks_[device].push_back(chunk);
        cache.add_chunk();
        stats_.device_cache_bytes += bytes;
        if (regrow.shrunk())
            stats_.device_regrown_bytes += bytes;
    }
    return true;
}

bool Engine::resume_quiet_devices()
{
    std::lock_guard<std::mutex> lock(mu_);
    const double now = device_clock_s();
    bool wanted = false;
    for (std::size_t d = 0; d < device_caches_.size(); ++d) {
        if (device_regrow_[d].may_grow(now))
            device_caches_[d].resume_growing();
        wanted = wanted || device_caches_[d].chunks_wanted() > 0;
    }
    return wanted && !stopping_;
}

// The device memory thread: grows the caches chunk by chunk, and all run long gives memory
// back when a device asks for it (DeviceMemory::pressure) and takes it again once the device
// has been quiet (core/cache_pressure.h). Pressure is looked at before each chunk, so a
// device short of memory stops a growing cache at once.
void Engine::device_memory_loop()
{
    // How often pressure is looked at once the caches are grown: the scheduler's own polling
    // period (HETPU_MGB_POLL_MS defaults to 10 ms), so waiting tasks see memory soon.
    constexpr auto kPressurePoll = std::chrono::milliseconds(10);
    bool growing = true;
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
        const std::size_t n = device_caches_.size();
        lock.unlock();
        const std::vector<std::uint64_t> wants = devices_->pressure();
        for (std::size_t d = 0; d < std::min(n, wants.size()); ++d)
            if (const std::uint64_t want = wants[d]) {
                const std::uint64_t chunk = device_caches_[d].chunk_bytes();
                shrink_device(d, static_cast<std::size_t>((want + chunk - 1) / chunk));
            }
        if (!growing)
            growing = resume_quiet_devices();
        if (growing && !grow_one_chunk()) {
            growing = false;
            bool first = false;
            {
                std::lock_guard<std::mutex> guard(mu_);
                first = devices_growing_;
                devices_growing_ = false;
            }
            if (first)
                notify_state();
        }
        lock.lock();
        if (!growing && !stopping_)
            device_memory_cv_.wait_for(lock, kPressurePoll);
    }
    if (devices_growing_) {
        devices_growing_ = false;
        lock.unlock();
        notify_state();
    }
}

std::uint64_t Engine::shrink_device(std::size_t device, std::size_t chunks)
{
    std::vector<std::uintptr_t> handles;
    std::uint64_t chunk_bytes = 0;
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (device >= device_caches_.size() || chunks == 0)
            return 0;
        DeviceCache &cache = device_caches_[device];
        cache.stop_growing();  // until the device has been quiet for a while
        device_regrow_[device].pressure(device_clock_s());
        chunk_bytes = cache.chunk_bytes();
        std::vector<ShrinkRegion> regions;
        std::vector<std::map<RegionKey, DeviceCopy>::iterator> copies;
        for (auto it = device_copies_.begin(); it != device_copies_.end(); ++it) {
            ShrinkRegion r{
                copies.size(), it->second.order, it->second.on_host && it->second.ready && it->second.pins == 0, {}};
            for (const DeviceSegment &seg : it->second.segments)
                if (seg.device == static_cast<int>(device))
                    r.chunks.push_back(seg.slot.chunk);
            if (r.chunks.empty())
                continue;
            regions.push_back(std::move(r));
            copies.push_back(it);
        }
        const ShrinkPlan plan = plan_shrink(cache, regions, chunks);
        for (std::size_t id : plan.evict) {
            for (const DeviceSegment &seg : copies[id]->second.segments) {
                stats_.device_evicted_bytes += seg.bytes;
                stats_.device_pressure_evicted_bytes += seg.bytes;
            }
            free_device_copy_locked(copies[id]);
        }
        for (std::size_t c : plan.chunks) {
            cache.remove_chunk(c);
            handles.push_back(device_chunks_[device][c]);
            device_chunks_[device][c] = 0;
            stats_.device_cache_bytes -= chunk_bytes;
            stats_.device_pressure_released_bytes += chunk_bytes;
        }
    }
    // Outside the lock: the runtime's allocator may take its own locks.
    for (std::uintptr_t h : handles)
        devices_->release(device, h, chunk_bytes);
    return handles.size() * chunk_bytes;
}

void Engine::wait_device_caches_ready()
{
    std::unique_lock<std::mutex> lock(mu_);
    while (devices_growing_)
        wait_state(lock);
}

std::size_t Engine::device_free_slots(std::size_t device)
{
    std::lock_guard<std::mutex> lock(mu_);
    return device < device_caches_.size() ? device_caches_[device].free_slots() : 0;
}

std::vector<Engine::SegmentAddress> Engine::addresses_locked(const DeviceCopy &copy) const
{
    std::vector<SegmentAddress> out;
    // Adjacent segments (same buffer, consecutive bytes of the region) merge into one copy.
    auto add = [&out](const SegmentAddress &a) {
        if (!out.empty()) {
            SegmentAddress &last = out.back();
            if (last.where.device == a.where.device && last.where.base == a.where.base &&
                last.where.offset + last.bytes == a.where.offset &&
                last.region_offset + last.bytes == a.region_offset) {
                last.bytes += a.bytes;
                return;
            }
        }
        out.push_back(a);
    };
    for (const DeviceSegment &seg : copy.segments) {
        if (seg.device == kHostMemory) {
            add({{kHostMemory, reinterpret_cast<std::uintptr_t>(copy.host_part.get() + seg.region_offset), 0},
                 seg.region_offset,
                 seg.bytes});
        } else {
            const auto d = static_cast<std::size_t>(seg.device);
            add({{seg.device, device_chunks_[d][seg.slot.chunk], device_caches_[d].offset_of(seg.slot)},
                 seg.region_offset,
                 seg.bytes});
        }
    }
    return out;
}

void Engine::read_device_copy(const std::vector<SegmentAddress> &segments, char *dst)
{
    for (const SegmentAddress &s : segments) {
        if (s.where.device == kHostMemory)
            std::memcpy(dst + s.region_offset, reinterpret_cast<const char *>(s.where.base), s.bytes);
        else
            devices_->copy(s.where, {kHostMemory, reinterpret_cast<std::uintptr_t>(dst + s.region_offset), 0}, s.bytes);
    }
}

void Engine::free_device_copy_locked(std::map<RegionKey, DeviceCopy>::iterator it)
{
    for (const DeviceSegment &seg : it->second.segments)
        if (seg.device != kHostMemory)
            device_caches_[static_cast<std::size_t>(seg.device)].give_back(seg.slot);
    device_copies_.erase(it);
}

bool Engine::make_device_room_locked(std::size_t device, std::size_t slots, std::size_t keep_rank_below)
{
    DeviceCache &cache = device_caches_[device];
    if (cache.free_slots() >= slots)
        return true;
    // Copies on this device that may go: their bytes are on the host tier (flushed, or a
    // prefetched copy) and nobody reads them.
    std::vector<std::map<RegionKey, DeviceCopy>::iterator> copies;
    std::vector<SlotCandidate> candidates;
    for (auto it = device_copies_.begin(); it != device_copies_.end(); ++it) {
        const DeviceCopy &c = it->second;
        if (!c.on_host || !c.ready || c.pins > 0 ||
            std::none_of(c.segments.begin(), c.segments.end(),
                         [&](const DeviceSegment &s) { return s.device == static_cast<int>(device); }))
            continue;
        candidates.push_back({copies.size(), c.order, rank_locked(it->first.first)});
        copies.push_back(it);
    }
    const bool score = config_.eviction == EvictionPolicy::Score;
    for (std::size_t id : order_slot_victims(std::move(candidates), score, keep_rank_below)) {
        if (cache.free_slots() >= slots)
            break;
        for (const DeviceSegment &seg : copies[id]->second.segments)
            stats_.device_evicted_bytes += seg.bytes;
        free_device_copy_locked(copies[id]);
    }
    return cache.free_slots() >= slots;
}

void Engine::capture_from_devices(const std::string &name, std::int64_t version,
                                  const std::vector<DeviceSource> &sources)
{
    if (!device_tier())
        throw Error(-EINVAL, "capture_from_devices: no device tier is configured ([device] size)");
    const Key key{name, version};
    std::unique_lock<std::mutex> lock(mu_);
    Version *v = find_locked(key, false);
    if (!v || !v->declared_in_memory)
        throw Error(-ENOENT, "checkpoint '" + name + "' version " + std::to_string(version) + " was not begun");
    const std::size_t n = device_caches_.size();
    const std::uint64_t slot = config_.device.slot_bytes;
    std::vector<GroupRegion> regions;
    std::vector<std::size_t> demand(n, 0);
    for (const DeviceSource &s : sources) {
        if (s.index >= v->regions.size() || v->device_staged[s.index] || v->host_offset[s.index] != -1 ||
            device_copies_.count({key, s.index}))
            throw Error(-EINVAL, "region index " + std::to_string(s.index) + " is out of range or captured twice");
        if (s.device >= n)
            throw Error(-EINVAL,
                        "device " + std::to_string(s.device) + " does not exist (" + std::to_string(n) + " devices)");
        regions.push_back({s.device, v->regions[s.index].size});
        region_home_[v->regions[s.index].region] = s.device;
        demand[s.device] += static_cast<std::size_t>(device_caches_[s.device].slots_for(v->regions[s.index].size));
    }
    std::vector<std::size_t> free_slots(n);
    for (std::size_t d = 0; d < n; ++d) {
        make_device_room_locked(d, demand[d]);
        free_slots[d] = device_caches_[d].free_slots();
    }
    GroupPlacement placement;
    try {
        placement = place_group(regions, free_slots, slot, link_bw_, host_bw_, config_.device.peer_policy);
    } catch (const std::exception &e) {
        throw Error(-ENOSPC, std::string("checkpoint '") + name + "': " + e.what());
    }
    if (!placement.schedule.transfers.empty()) {
        ++stats_.peer_schedules;
        stats_.peer_schedule_time_s = placement.schedule.time;
    }
    // Reserve every destination now (the lock is dropped for the copies).
    std::vector<RegionKey> keys;
    for (const DeviceSource &s : sources) {
        keys.push_back({key, s.index});
        DeviceCopy &c = device_copies_[keys.back()];
        c.order = ++next_device_order_;
        c.pins = 1;
    }
    struct Copy {
        DeviceAddress src, dst;
        std::uint64_t bytes;
    };
    std::vector<Copy> copies;
    for (const Piece &p : placement.pieces) {
        const DeviceSource &s = sources[p.region];
        DeviceCopy &c = device_copies_[keys[p.region]];
        DeviceSegment seg{p.to == kHost ? kHostMemory : p.to, {0, 0}, p.region_offset, p.bytes};
        if (p.to == kHost) {
            if (!c.host_part)
                c.host_part.reset(new char[v->regions[s.index].size]);
        } else {
            seg.slot = device_caches_[static_cast<std::size_t>(p.to)].take();
        }
        c.segments.push_back(seg);
        const DeviceAddress src{static_cast<int>(s.device), s.base, s.offset + p.region_offset};
        DeviceAddress dst =
            seg.device == kHostMemory
                ? DeviceAddress{kHostMemory, reinterpret_cast<std::uintptr_t>(c.host_part.get() + p.region_offset), 0}
                : DeviceAddress{seg.device, device_chunks_[static_cast<std::size_t>(p.to)][seg.slot.chunk],
                                device_caches_[static_cast<std::size_t>(p.to)].offset_of(seg.slot)};
        // Adjacent slots (a fresh cache hands them out in order) make one copy: a driver
        // command costs far more than its bytes at slot sizes (measured on PoCL: 16 commands
        // of 1 MiB take several times one of 16 MiB).
        Copy *last = copies.empty() ? nullptr : &copies.back();
        if (last && last->src.device == src.device && last->src.base == src.base &&
            last->src.offset + last->bytes == src.offset && last->dst.device == dst.device &&
            last->dst.base == dst.base && last->dst.offset + last->bytes == dst.offset)
            last->bytes += p.bytes;
        else
            copies.push_back({src, dst, p.bytes});
        if (p.to == kHost)
            stats_.device_to_host_at_capture_bytes += p.bytes;
        else if (static_cast<std::size_t>(p.to) == s.device)
            stats_.device_local_bytes += p.bytes;
        else
            stats_.device_peer_bytes += p.bytes;
    }
    ++active_copies_;  // flushes step aside while the application waits for this
    lock.unlock();
    // All devices copy at once, as the schedule assumes (each device's own queue or stream
    // carries its outgoing copies): one thread per source device beyond the first.
    std::vector<std::vector<const Copy *>> by_device(n);
    for (const Copy &c : copies)
        by_device[static_cast<std::size_t>(c.src.device)].push_back(&c);
    std::vector<std::optional<Error>> errors(n);
    auto copy_from = [&](std::size_t d) {
        try {
            for (const Copy *c : by_device[d])
                devices_->copy(c->src, c->dst, c->bytes);
        } catch (const Error &e) {
            errors[d] = e;
        } catch (const std::exception &e) {
            errors[d] = Error(-EIO, std::string("device copy: ") + e.what());
        }
    };
    const auto copy_start = std::chrono::steady_clock::now();
    std::vector<std::thread> helpers;
    std::size_t mine = n;
    for (std::size_t d = 0; d < n; ++d) {
        if (by_device[d].empty())
            continue;
        if (mine == n)
            mine = d;  // the calling thread takes the first device
        else
            try {
                helpers.emplace_back(copy_from, d);
            } catch (const std::system_error &) {
                copy_from(d);  // no thread to spare: this device copies after the others
            }
    }
    if (mine < n)
        copy_from(mine);
    for (std::thread &t : helpers)
        t.join();
    std::optional<Error> failed;
    for (const std::optional<Error> &e : errors)
        if (e && !failed)
            failed = e;
    lock.lock();
    stats_.device_capture_copy_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - copy_start).count();
    --active_copies_;
    v = find_locked(key, false);
    for (std::size_t i = 0; i < sources.size(); ++i) {
        auto it = device_copies_.find(keys[i]);
        if (failed) {
            free_device_copy_locked(it);
            continue;
        }
        it->second.pins = 0;
        it->second.ready = true;
        v->device_staged[sources[i].index] = true;
        ++v->staged;
        device_flush_queue_.push_back(keys[i]);
    }
    if (failed)
        record_error_locked(*v, *failed);
    lock.unlock();
    device_cv_.notify_all();
    notify_state();
    if (failed)
        throw *failed;
}

// Device -> host tier: each staged region is read back from device memory into a staging
// buffer and captured into the host tier like a host-resident region (host cache, or written
// through), from where the existing flushes take it to the disks. The device copy stays
// (evictable) for fast restores until its slots are needed.
void Engine::device_flush_loop()
{
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        device_cv_.wait(lock, [&] { return stopping_ || !device_flush_queue_.empty(); });
        if (device_flush_queue_.empty())
            return;
        const RegionKey rk = device_flush_queue_.front();
        device_flush_queue_.pop_front();
        auto it = device_copies_.find(rk);
        Version *v = find_locked(rk.first, false);
        if (it == device_copies_.end() || !v)
            continue;
        ++device_flushes_in_flight_;
        ++it->second.pins;
        const std::uint64_t size = v->regions[rk.second].size;
        const std::vector<SegmentAddress> segments = addresses_locked(it->second);
        lock.unlock();
        std::optional<Error> failed;
        bool done = false;
        // Runs under the lock as the host tier counts the region: from then on the device
        // copy is evictable (no window where the host has it and the device still holds it).
        const std::function<void()> on_host = [&] {
            auto c = device_copies_.find(rk);
            --c->second.pins;
            c->second.on_host = true;
            stats_.device_flushed_bytes += size;
            done = true;
            // A region the schedule sent entirely to the host holds no device memory: its
            // staging copy is done with, and a prefetch may bring it onto a device later.
            if (std::none_of(c->second.segments.begin(), c->second.segments.end(),
                             [](const DeviceSegment &s) { return s.device != kHostMemory; }))
                free_device_copy_locked(c);
        };
        try {
            std::unique_ptr<char[]> staging(new char[size]);
            read_device_copy(segments, staging.get());
            capture_impl(rk.first.first, rk.first.second, rk.second, staging.get(), &on_host);
        } catch (const Error &e) {
            failed = e;
        } catch (const std::exception &e) {
            failed = Error(-EIO, std::string("device flush: ") + e.what());
        }
        lock.lock();
        if (!done) {
            --device_copies_.find(rk)->second.pins;
            if (!failed)
                failed = Error(-EIO, "device flush: the region was not captured into the host tier");
        }
        if (failed) {
            if (Version *again = find_locked(rk.first, false))
                record_error_locked(*again, *failed);
        }
        --device_flushes_in_flight_;
        lock.unlock();
        notify_state();
        lock.lock();
    }
}

bool Engine::restore_from_device(std::unique_lock<std::mutex> &lock, const RegionKey &rk, void *dst, std::uint64_t size)
{
    auto it = device_copies_.find(rk);
    while (it != device_copies_.end() && !it->second.ready && it->second.on_host) {
        wait_state(lock);  // being prefetched: wait for it rather than read the disk too
        it = device_copies_.find(rk);
    }
    if (it == device_copies_.end() || !it->second.ready)
        return false;
    ++it->second.pins;
    const std::vector<SegmentAddress> segments = addresses_locked(it->second);
    lock.unlock();
    std::optional<Error> failed;
    try {
        read_device_copy(segments, static_cast<char *>(dst));
    } catch (const Error &e) {
        failed = e;
    }
    lock.lock();
    --device_copies_.find(rk)->second.pins;
    if (failed)
        throw *failed;
    stats_.restored_from_device_bytes += size;
    return true;
}

void Engine::restore_to_device(const std::string &name, std::int64_t version, std::size_t index,
                               const DeviceAddress &dst, std::uint64_t dst_size)
{
    if (!device_tier() || dst.device < 0 || static_cast<std::size_t>(dst.device) >= device_caches_.size())
        throw Error(-EINVAL, "restore_to_device: no device " + std::to_string(dst.device));
    const Key key{name, version};
    std::unique_lock<std::mutex> lock(mu_);
    Version *v = find_locked(key, true);
    if (!v)
        throw Error(-ENOENT, "checkpoint '" + name + "' version " + std::to_string(version) + " exists on no tier");
    if (index >= v->regions.size() || v->regions[index].size != dst_size)
        throw Error(-EINVAL, "restore_to_device: region " + std::to_string(index) + " of version " +
                                 std::to_string(version) + " does not match the destination");
    if (index < v->regions.size())
        region_home_[v->regions[index].region] = static_cast<std::size_t>(dst.device);
    auto it = device_copies_.find({key, index});
    while (it != device_copies_.end() && !it->second.ready && it->second.on_host) {
        wait_state(lock);  // being prefetched
        it = device_copies_.find({key, index});
    }
    if (it != device_copies_.end() && it->second.ready) {
        ++it->second.pins;
        const std::vector<SegmentAddress> segments = addresses_locked(it->second);
        lock.unlock();
        std::optional<Error> failed;
        try {
            for (const SegmentAddress &s : segments)
                devices_->copy(s.where, {dst.device, dst.base, dst.offset + s.region_offset}, s.bytes);
        } catch (const Error &e) {
            failed = e;
        }
        lock.lock();
        --device_copies_.find({key, index})->second.pins;
        if (failed)
            throw *failed;
        stats_.restored_from_device_bytes += dst_size;
        stats_.restored_into_device_bytes += dst_size;
        consume_hint_locked(key, index);
        lock.unlock();
        notify_state();
        return;
    }
    lock.unlock();
    std::unique_ptr<char[]> staging(new char[dst_size]);
    restore(name, version, index, staging.get(), dst_size);
    devices_->copy({kHostMemory, reinterpret_cast<std::uintptr_t>(staging.get()), 0}, dst, dst_size);
    lock.lock();
    stats_.restored_into_device_bytes += dst_size;
}

// Restore hints reach the device tier: the first hinted region (in rank order) that has a
// home device (where it was captured from or last restored into) and no device copy is read
// back into that device's cache, from the host cache when it is there, else from disk
// (checksums verified). Room comes from free slots and from evictable device copies that are
// not needed before it (no hint, or a later one); never from unflushed captures.
void Engine::device_prefetch_loop()
{
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        if (stopping_)
            return;
        std::size_t device = 0;
        const HintedRegion next = next_hinted_region_locked([&](const Key &key, Version &v, std::size_t i) {
            auto home = region_home_.find(v.regions[i].region);
            if (home == region_home_.end() || device_copies_.count({key, i}))
                return false;
            const DeviceCache &c = device_caches_[home->second];
            if (c.slots_for(v.regions[i].size) > c.total_slots())
                return false;  // can never fit that cache
            const long long off = v.host_offset[i];
            const bool in_host = off >= 0 && is_readable(cached_.at(static_cast<std::size_t>(off)).life.state());
            if (!in_host && !v.local_complete && !v.remote_complete)
                return false;  // not readable yet
            device = home->second;
            return true;
        });
        const Key target = next.key;
        const std::size_t target_index = next.index, target_rank = next.rank;
        if (target_rank == kNoHint) {
            device_prefetch_cv_.wait(lock);
            continue;
        }
        Version &v = versions_.at(target);
        const std::uint64_t size = v.regions[target_index].size;
        DeviceCache &cache = device_caches_[device];
        const std::size_t need = static_cast<std::size_t>(cache.slots_for(size));
        // Room without evicting anything needed as soon as the target or sooner.
        if (!make_device_room_locked(device, need, target_rank + 1)) {
            device_prefetch_cv_.wait(lock);  // everything on the device is needed sooner
            continue;
        }
        const RegionKey rk{target, target_index};
        DeviceCopy &copy = device_copies_[rk];
        copy.order = ++next_device_order_;
        copy.on_host = true;  // a copy of data the host tier or a disk holds
        copy.pins = 1;
        for (std::uint64_t at = 0; at < size; at += cache.slot_bytes())
            copy.segments.push_back(
                {static_cast<int>(device), cache.take(), at, std::min<std::uint64_t>(cache.slot_bytes(), size - at)});
        const std::vector<SegmentAddress> segments = addresses_locked(copy);
        // Source: the host cache (pinned while read), else the disk.
        const long long off = v.host_offset[target_index];
        const bool from_host = off >= 0 && is_readable(cached_.at(static_cast<std::size_t>(off)).life.state());
        if (from_host)
            ++cached_.at(static_cast<std::size_t>(off)).pins;
        const Manifest one = manifest_of(target, v);
        const std::string dir = v.local_complete ? config_.local_dir : config_.remote_dir;
        ++active_prefetches_;
        lock.unlock();
        bool failed = false;
        try {
            std::unique_ptr<char[]> staging;
            const char *src = from_host ? host_base_ + off : nullptr;
            if (!from_host) {
                staging.reset(new char[size]);
                read_region(dir, one, target_index, staging.get());
                src = staging.get();
            }
            for (const SegmentAddress &s : segments)
                devices_->copy({kHostMemory, reinterpret_cast<std::uintptr_t>(src + s.region_offset), 0}, s.where,
                               s.bytes);
        } catch (const std::exception &) {
            failed = true;
        }
        --active_prefetches_;
        lock.lock();
        if (from_host)
            --cached_.at(static_cast<std::size_t>(off)).pins;
        auto it = device_copies_.find(rk);
        if (failed) {
            // Unreadable: drop it and its hint; the restore reads the disk itself and reports it.
            free_device_copy_locked(it);
            drop_hint_locked(target);
        } else {
            it->second.pins = 0;
            it->second.ready = true;
            stats_.device_prefetched_bytes += size;
        }
        cv_.notify_all();  // a restore may be waiting for this copy
    }
}

}  // namespace hetpu::ckpt
