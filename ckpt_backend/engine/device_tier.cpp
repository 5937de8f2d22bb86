// SPDX-License-Identifier: LGPL-2.1-or-later
// The device cache tier's memory and captures (see device_tier.h): per-device caches grown
// chunk by chunk and given back under pressure, and group captures placed by the peer
// schedule. device_tier_io.cpp has the flush, restores and prefetch.
#include "ckpt_backend/engine/device_tier.h"

#include "ckpt_backend/core/group_placement.h"
#include "ckpt_backend/engine/chain.h"

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

DeviceTier::DeviceTier(std::unique_ptr<DeviceMemory> devices, const DeviceTierConfig &config)
    : MemoryTier(Tier::Device, "device tier"), devices_(std::move(devices)), config_(config)
{}

DeviceTier::~DeviceTier() { detach(); }

void DeviceTier::attach(Chain &chain, std::size_t position)
{
    join(chain, position);
    const std::size_t n = devices_->device_count();
    const DeviceTierConfig &dc = config_;
    link_bw_.assign(n, std::vector<double>(n, 0.0));
    host_bw_.assign(n, 0.0);
    for (std::size_t d = 0; d < n; ++d) {
        const std::uint64_t target =
            dc.fraction > 0 ? static_cast<std::uint64_t>(dc.fraction * static_cast<double>(devices_->device_bytes(d)))
                            : dc.bytes;
        caches_.emplace_back(target, dc.chunk_bytes, dc.slot_bytes);
        for (std::size_t j = 0; j < n; ++j)
            if (j != d)
                link_bw_[d][j] = devices_->bandwidth(d, static_cast<int>(j));
        host_bw_[d] = devices_->bandwidth(d, kHostMemory);
    }
    chunks_.resize(n);
    // The ceiling of the doubling: 64 quiet spells.
    regrow_.assign(n, RegrowBackoff(dc.regrow_after_s, 64 * dc.regrow_after_s));
    started_ = std::chrono::steady_clock::now();
    chain_->stats.device_caches_growing = true;
}

void DeviceTier::start(std::vector<std::thread> &threads)
{
    threads.emplace_back(&DeviceTier::memory_loop, this);
    threads.emplace_back(&DeviceTier::flush_loop, this, false);
    if (chain_->config().prefetch)
        threads.emplace_back(&DeviceTier::prefetch_loop, this);
}

void DeviceTier::wake_all()
{
    MemoryTier::wake_all();
    memory_cv_.notify_all();
}

void DeviceTier::detach()
{
    for (std::size_t d = 0; d < chunks_.size(); ++d)
        for (std::uintptr_t chunk : chunks_[d])
            if (chunk != 0)  // 0: given back under pressure already
                devices_->release(d, chunk, caches_[d].chunk_bytes());
    chunks_.clear();
    copies_.clear();
}

double DeviceTier::clock_s() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

// Incremental initialisation of the device caches: one chunk per device in turn, so every
// device has a usable cache after its first chunk instead of after the whole cache. The
// same growth takes chunks again for a cache that gave memory back, once its device is quiet.
bool DeviceTier::grow_one_chunk()
{
    std::size_t device = 0;
    std::uint64_t bytes = 0;
    {
        std::lock_guard<std::mutex> lock(chain_->mu);
        bool wanted = false;
        std::size_t fewest = SIZE_MAX;
        for (std::size_t d = 0; d < caches_.size(); ++d)
            if (caches_[d].chunks_wanted() > 0 && caches_[d].live_chunks() < fewest) {
                fewest = caches_[d].live_chunks();
                device = d;
                wanted = true;
            }
        if (!wanted || chain_->stopping)
            return false;
        bytes = caches_[device].chunk_bytes();
    }
    const std::uintptr_t chunk = devices_->allocate(device, bytes);
    std::lock_guard<std::mutex> lock(chain_->mu);
    DeviceCache &cache = caches_[device];
    RegrowBackoff &regrow = regrow_[device];
    if (chunk == 0) {
        cache.stop_growing();
        if (regrow.shrunk())
            regrow.pressure(clock_s());  // still short of memory: wait longer
        else
            ++chain_->stats.device_chunk_refusals;  // the device is smaller than the cache asked for
    } else {
        chunks_[device].push_back(chunk);
        cache.add_chunk();
        chain_->stats.device_cache_bytes += bytes;
        if (regrow.shrunk())
            chain_->stats.device_regrown_bytes += bytes;
    }
    return true;
}

bool DeviceTier::resume_quiet_devices()
{
    std::lock_guard<std::mutex> lock(chain_->mu);
    const double now = clock_s();
    bool wanted = false;
    for (std::size_t d = 0; d < caches_.size(); ++d) {
        if (regrow_[d].may_grow(now))
            caches_[d].resume_growing();
        wanted = wanted || caches_[d].chunks_wanted() > 0;
    }
    return wanted && !chain_->stopping;
}

// The device memory thread: grows the caches chunk by chunk, and all run long gives memory
// back when a device asks for it (DeviceMemory::pressure) and takes it again once the device
// has been quiet (core/cache_pressure.h). Pressure is looked at before each chunk, so a
// device short of memory stops a growing cache at once.
void DeviceTier::memory_loop()
{
    // How often pressure is looked at once the caches are grown: the scheduler's own polling
    // period (HETPU_MGB_POLL_MS defaults to 10 ms), so waiting tasks see memory soon.
    constexpr auto kPressurePoll = std::chrono::milliseconds(10);
    bool growing = true;
    std::unique_lock<std::mutex> lock(chain_->mu);
    while (!chain_->stopping) {
        const std::size_t n = caches_.size();
        lock.unlock();
        const std::vector<std::uint64_t> wants = devices_->pressure();
        for (std::size_t d = 0; d < std::min(n, wants.size()); ++d)
            if (const std::uint64_t want = wants[d]) {
                const std::uint64_t chunk = caches_[d].chunk_bytes();
                shrink(d, static_cast<std::size_t>((want + chunk - 1) / chunk));
            }
        if (!growing)
            growing = resume_quiet_devices();
        if (growing && !grow_one_chunk()) {
            growing = false;
            bool first = false;
            {
                std::lock_guard<std::mutex> guard(chain_->mu);
                first = chain_->stats.device_caches_growing;
                chain_->stats.device_caches_growing = false;
            }
            if (first)
                chain_->notify_state();
        }
        lock.lock();
        if (!growing && !chain_->stopping)
            memory_cv_.wait_for(lock, kPressurePoll);
    }
    if (chain_->stats.device_caches_growing) {
        chain_->stats.device_caches_growing = false;
        lock.unlock();
        chain_->notify_state();
    }
}

std::uint64_t DeviceTier::shrink(std::size_t device, std::size_t chunks)
{
    std::vector<std::uintptr_t> handles;
    std::uint64_t chunk_bytes = 0;
    {
        std::lock_guard<std::mutex> lock(chain_->mu);
        if (device >= caches_.size() || chunks == 0)
            return 0;
        DeviceCache &cache = caches_[device];
        cache.stop_growing();  // until the device has been quiet for a while
        regrow_[device].pressure(clock_s());
        chunk_bytes = cache.chunk_bytes();
        std::vector<ShrinkRegion> regions;
        std::vector<std::map<RegionKey, Copy>::iterator> copies;
        for (auto it = copies_.begin(); it != copies_.end(); ++it) {
            ShrinkRegion r{
                copies.size(), it->second.order, it->second.on_host && it->second.ready && it->second.pins == 0, {}};
            for (const Segment &seg : it->second.segments)
                if (seg.device == static_cast<int>(device))
                    r.chunks.push_back(seg.slot.chunk);
            if (r.chunks.empty())
                continue;
            regions.push_back(std::move(r));
            copies.push_back(it);
        }
        const ShrinkPlan plan = plan_shrink(cache, regions, chunks);
        for (std::size_t id : plan.evict) {
            for (const Segment &seg : copies[id]->second.segments) {
                chain_->stats.device_evicted_bytes += seg.bytes;
                chain_->stats.device_pressure_evicted_bytes += seg.bytes;
            }
            free_copy_locked(copies[id]);
        }
        for (std::size_t c : plan.chunks) {
            cache.remove_chunk(c);
            handles.push_back(chunks_[device][c]);
            chunks_[device][c] = 0;
            chain_->stats.device_cache_bytes -= chunk_bytes;
            chain_->stats.device_pressure_released_bytes += chunk_bytes;
        }
    }
    // Outside the lock: the runtime's allocator may take its own locks.
    for (std::uintptr_t h : handles)
        devices_->release(device, h, chunk_bytes);
    return handles.size() * chunk_bytes;
}

void DeviceTier::wait_caches_ready()
{
    std::unique_lock<std::mutex> lock(chain_->mu);
    while (chain_->stats.device_caches_growing)
        chain_->wait_state(lock);
}

std::size_t DeviceTier::free_slots(std::size_t device)
{
    std::lock_guard<std::mutex> lock(chain_->mu);
    return device < caches_.size() ? caches_[device].free_slots() : 0;
}

std::vector<DeviceTier::SegmentAddress> DeviceTier::addresses_locked(const Copy &copy) const
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
    for (const Segment &seg : copy.segments) {
        if (seg.device == kHostMemory) {
            add({{kHostMemory, reinterpret_cast<std::uintptr_t>(copy.host_part.get()), seg.region_offset},
                 seg.region_offset,
                 seg.bytes});
        } else {
            const auto d = static_cast<std::size_t>(seg.device);
            add({{seg.device, chunks_[d][seg.slot.chunk], caches_[d].offset_of(seg.slot)},
                 seg.region_offset,
                 seg.bytes});
        }
    }
    return out;
}

void DeviceTier::read_copy(const std::vector<SegmentAddress> &segments, char *dst)
{
    for (const SegmentAddress &s : segments) {
        if (s.where.device == kHostMemory)
            std::memcpy(dst + s.region_offset, reinterpret_cast<const char *>(s.where.base) + s.where.offset, s.bytes);
        else
            devices_->copy(s.where, {kHostMemory, reinterpret_cast<std::uintptr_t>(dst + s.region_offset), 0}, s.bytes);
    }
}

void DeviceTier::free_copy_locked(std::map<RegionKey, Copy>::iterator it)
{
    for (const Segment &seg : it->second.segments)
        if (seg.device != kHostMemory)
            caches_[static_cast<std::size_t>(seg.device)].give_back(seg.slot);
    copies_.erase(it);
}

bool DeviceTier::make_room_locked(std::size_t device, std::size_t slots, std::size_t keep_rank_below)
{
    DeviceCache &cache = caches_[device];
    if (cache.free_slots() >= slots)
        return true;
    // Copies on this device that may go: their bytes are on the host tier (flushed, or a
    // prefetched copy) and nobody reads them.
    std::vector<std::map<RegionKey, Copy>::iterator> copies;
    std::vector<SlotCandidate> candidates;
    for (auto it = copies_.begin(); it != copies_.end(); ++it) {
        const Copy &c = it->second;
        if (!c.on_host || !c.ready || c.pins > 0 ||
            std::none_of(c.segments.begin(), c.segments.end(),
                         [&](const Segment &s) { return s.device == static_cast<int>(device); }))
            continue;
        candidates.push_back({copies.size(), c.order, chain_->rank_locked(it->first.first)});
        copies.push_back(it);
    }
    const bool score = chain_->config().eviction == EvictionPolicy::Score;
    for (std::size_t id : order_slot_victims(std::move(candidates), score, keep_rank_below)) {
        if (cache.free_slots() >= slots)
            break;
        for (const Segment &seg : copies[id]->second.segments)
            chain_->stats.device_evicted_bytes += seg.bytes;
        free_copy_locked(copies[id]);
    }
    return cache.free_slots() >= slots;
}

void DeviceTier::capture_from_devices(const Key &key, const std::vector<DeviceSource> &sources)
{
    const std::string &name = key.first;
    const std::int64_t version = key.second;
    std::unique_lock<std::mutex> lock(chain_->mu);
    Version *v = chain_->find_locked(key, false);
    if (!v || !v->declared_in_memory)
        throw Error(-ENOENT, "checkpoint '" + name + "' version " + std::to_string(version) + " was not begun");
    const std::size_t n = caches_.size();
    const std::uint64_t slot = config_.slot_bytes;
    std::vector<GroupRegion> regions;
    std::vector<std::size_t> demand(n, 0);
    for (const DeviceSource &s : sources) {
        if (s.index >= v->regions.size() || v->deepest[s.index] >= 0 || copies_.count({key, s.index}))
            throw Error(-EINVAL, "region index " + std::to_string(s.index) + " is out of range or captured twice");
        if (s.device >= n)
            throw Error(-EINVAL,
                        "device " + std::to_string(s.device) + " does not exist (" + std::to_string(n) + " devices)");
        regions.push_back({s.device, v->regions[s.index].size});
        region_home_[v->regions[s.index].region] = s.device;
        demand[s.device] += static_cast<std::size_t>(caches_[s.device].slots_for(v->regions[s.index].size));
    }
    std::vector<std::size_t> free_slots(n);
    for (std::size_t d = 0; d < n; ++d) {
        make_room_locked(d, demand[d]);
        free_slots[d] = caches_[d].free_slots();
    }
    GroupPlacement placement;
    try {
        placement = place_group(regions, free_slots, slot, link_bw_, host_bw_, config_.peer_policy);
    } catch (const std::exception &e) {
        throw Error(-ENOSPC, std::string("checkpoint '") + name + "': " + e.what());
    }
    if (!placement.schedule.transfers.empty()) {
        ++chain_->stats.peer_schedules;
        chain_->stats.peer_schedule_time_s = placement.schedule.time;
    }
    // Reserve every destination now (the lock is dropped for the copies).
    std::vector<RegionKey> keys;
    for (const DeviceSource &s : sources) {
        keys.push_back({key, s.index});
        Copy &c = copies_[keys.back()];
        c.order = ++next_order_;
        c.pins = 1;
    }
    std::vector<GroupCopy> copies;
    for (const Piece &p : placement.pieces) {
        const DeviceSource &s = sources[p.region];
        Copy &c = copies_[keys[p.region]];
        Segment seg{p.to == kHost ? kHostMemory : p.to, {0, 0}, p.region_offset, p.bytes};
        if (p.to == kHost) {
            if (!c.host_part)
                c.host_part.reset(new char[v->regions[s.index].size]);
        } else {
            seg.slot = caches_[static_cast<std::size_t>(p.to)].take();
        }
        c.segments.push_back(seg);
        const DeviceAddress src{static_cast<int>(s.device), s.base, s.offset + p.region_offset};
        DeviceAddress dst =
            seg.device == kHostMemory
                // One base per host part, the position as the offset: adjacent host-bound
                // pieces then merge into one read below.
                ? DeviceAddress{kHostMemory, reinterpret_cast<std::uintptr_t>(c.host_part.get()), p.region_offset}
                : DeviceAddress{seg.device, chunks_[static_cast<std::size_t>(p.to)][seg.slot.chunk],
                                caches_[static_cast<std::size_t>(p.to)].offset_of(seg.slot)};
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
            chain_->stats.device_to_host_at_capture_bytes += p.bytes;
        else if (static_cast<std::size_t>(p.to) == s.device)
            chain_->stats.device_local_bytes += p.bytes;
        else
            chain_->stats.device_peer_bytes += p.bytes;
    }
    ++chain_->active_copies;  // flushes step aside while the application waits for this
    lock.unlock();
    const auto copy_start = std::chrono::steady_clock::now();
    const std::optional<Error> failed = copy_on_every_device(*devices_, copies, n);
    lock.lock();
    chain_->stats.device_capture_copy_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - copy_start).count();
    --chain_->active_copies;
    v = chain_->find_locked(key, false);
    for (std::size_t i = 0; i < sources.size(); ++i) {
        auto it = copies_.find(keys[i]);
        if (failed) {
            free_copy_locked(it);
            continue;
        }
        it->second.pins = 0;
        it->second.ready = true;
        chain_->reached_locked(lock, keys[i], position_);
        flushes_.push_locked(keys[i]);
    }
    if (failed)
        chain_->record_error_locked(*v, *failed);
    lock.unlock();
    flushes_.wake_all();
    chain_->notify_state();
    if (failed)
        throw *failed;
}

}  // namespace hetpu::ckpt
