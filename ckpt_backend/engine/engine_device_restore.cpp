// SPDX-License-Identifier: LGPL-2.1-or-later
// The device cache tier's way back (see engine.h): restores from a device copy into host
// memory or straight into device memory, and the device prefetch thread that reads hinted
// regions into a device's cache ahead of their restore.
#include "ckpt_backend/engine/engine.h"

#include "ckpt_backend/core/eviction.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>

namespace hetpu::ckpt {

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
            if (!in_host && !v.on_any_disk())
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
        const std::string dir = disks_[v.first_disk()]->dir();
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
