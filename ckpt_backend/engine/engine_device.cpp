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

namespace {

struct GroupCopy {
    DeviceAddress src, dst;
    std::uint64_t bytes;
};

// Runs a group's copies with every source device copying at once, as the peer schedule
// assumes (each device's own queue or stream carries its outgoing copies): one thread per
// source device beyond the first, which the calling thread takes. Returns the first error.
std::optional<Error> copy_on_every_device(DeviceMemory &devices, const std::vector<GroupCopy> &copies, std::size_t n)
{
    std::vector<std::vector<const GroupCopy *>> by_device(n);
    for (const GroupCopy &c : copies)
        by_device[static_cast<std::size_t>(c.src.device)].push_back(&c);
    std::vector<std::optional<Error>> errors(n);
    auto copy_from = [&](std::size_t d) {
        try {
            for (const GroupCopy *c : by_device[d])
                devices.copy(c->src, c->dst, c->bytes);
        } catch (const Error &e) {
            errors[d] = e;
        } catch (const std::exception &e) {
            errors[d] = Error(-EIO, std::string("device copy: ") + e.what());
        }
    };
    std::vector<std::thread> helpers;
    std::size_t mine = n;
    for (std::size_t d = 0; d < n; ++d) {
        if (by_device[d].empty())
            continue;
        if (mine == n)
            mine = d;
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
    for (const std::optional<Error> &e : errors)
        if (e)
            return e;
    return std::nullopt;
}

}  // namespace

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
            add({{kHostMemory, reinterpret_cast<std::uintptr_t>(copy.host_part.get()), seg.region_offset},
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
            std::memcpy(dst + s.region_offset, reinterpret_cast<const char *>(s.where.base) + s.where.offset, s.bytes);
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
    std::vector<GroupCopy> copies;
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
                // One base per host part, the position as the offset: adjacent host-bound
                // pieces then merge into one read below.
                ? DeviceAddress{kHostMemory, reinterpret_cast<std::uintptr_t>(c.host_part.get()), p.region_offset}
                : DeviceAddress{seg.device, device_chunks_[static_cast<std::size_t>(p.to)][seg.slot.chunk],
                                device_caches_[static_cast<std::size_t>(p.to)].offset_of(seg.slot)};
        // Adjacent slots (a fresh cache hands them out in order) make one copy: a driver
        // command costs far more than its bytes at slot sizes (measured on PoCL: 16 commands
        // of 1 MiB take several times one of 16 MiB).
        GroupCopy *last = copies.empty() ? nullptr : &copies.back();
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
    const auto copy_start = std::chrono::steady_clock::now();
    const std::optional<Error> failed = copy_on_every_device(*devices_, copies, n);
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

}  // namespace hetpu::ckpt
