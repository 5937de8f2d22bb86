// SPDX-License-Identifier: LGPL-2.1-or-later
// The device cache tier's data paths (see device_tier.h): the flush of captured regions to
// the next tier, restores from a device copy into host memory or straight into device
// memory, and the prefetch thread that reads hinted regions into a device's cache ahead of
// their restore.
#include "ckpt_backend/engine/device_tier.h"

#include "ckpt_backend/core/eviction.h"
#include "ckpt_backend/engine/chain.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace hetpu::ckpt {

void DeviceTier::accept(const RegionKey &rk, const void *src, const std::function<void(bool)> *on_reached)
{
    // A host-resident region: the device caches hold only what was captured from devices.
    if (position_ + 1 >= chain_->size())
        throw Error(-EINVAL, "the device tier takes host memory only to pass it on, and no tier follows it");
    chain_->tier(position_ + 1).accept(rk, src, on_reached);
}

// Device -> next tier: each captured region is read back from device memory into a staging
// buffer and handed to the next tier like a host-resident region (the host cache, or written
// through). The device copy stays (evictable) for fast restores until its slots are needed.
void DeviceTier::flush_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, Tier &next)
{
    auto it = copies_.find(rk);
    Version *v = chain_->find_locked(rk.first, false);
    if (it == copies_.end() || !v)
        return;
    ++it->second.pins;
    const std::uint64_t size = v->regions[rk.second].size;
    const std::vector<SegmentAddress> segments = addresses_locked(it->second);
    lock.unlock();
    std::optional<Error> failed;
    bool done = false;
    // Runs under the lock as the next tier counts the region: from then on the device copy
    // is evictable (no window where the next tier has it and this one still holds it).
    const std::function<void(bool)> on_next = [&](bool) {
        auto c = copies_.find(rk);
        --c->second.pins;
        c->second.on_host = true;
        chain_->stats.device_flushed_bytes += size;
        done = true;
        // A region the schedule sent entirely to the host holds no device memory: its
        // staging copy is done with, and a prefetch may bring it onto a device later.
        if (std::none_of(c->second.segments.begin(), c->second.segments.end(),
                         [](const Segment &s) { return s.device != kHostMemory; }))
            free_copy_locked(c);
    };
    try {
        std::unique_ptr<char[]> staging(new char[size]);
        read_copy(segments, staging.get());
        next.accept(rk, staging.get(), &on_next);
    } catch (const Error &e) {
        failed = e;
    } catch (const std::exception &e) {
        failed = Error(-EIO, std::string("device flush: ") + e.what());
    }
    lock.lock();
    if (!done) {
        --copies_.find(rk)->second.pins;
        if (!failed)
            failed = Error(-EIO, "device flush: the region was not taken by the " + next.label());
    }
    if (failed) {
        if (Version *again = chain_->find_locked(rk.first, false))
            chain_->record_error_locked(*again, *failed);
    }
}

DeviceTier::Copy *DeviceTier::ready_copy_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk)
{
    auto it = copies_.find(rk);
    while (it != copies_.end() && !it->second.ready && it->second.on_host) {
        chain_->wait_state(lock);  // being prefetched: wait for it rather than read the disk too
        it = copies_.find(rk);
    }
    return it == copies_.end() || !it->second.ready ? nullptr : &it->second;
}

bool DeviceTier::holds_locked(const RegionKey &rk) const
{
    auto it = copies_.find(rk);
    return it != copies_.end() && it->second.ready;
}

void DeviceTier::with_pinned_copy_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, Copy &copy,
                                         const std::function<void(const std::vector<SegmentAddress> &)> &io)
{
    ++copy.pins;
    const std::vector<SegmentAddress> segments = addresses_locked(copy);
    lock.unlock();
    std::optional<Error> failed;
    try {
        io(segments);
    } catch (const Error &e) {
        failed = e;
    }
    lock.lock();
    --copies_.find(rk)->second.pins;
    if (failed)
        throw *failed;
}

bool DeviceTier::read_locked(std::unique_lock<std::mutex> &lock, const RegionKey &rk, void *dst)
{
    Copy *copy = ready_copy_locked(lock, rk);
    if (!copy)
        return false;
    with_pinned_copy_locked(lock, rk, *copy, [&](const std::vector<SegmentAddress> &segments) {
        read_copy(segments, static_cast<char *>(dst));
    });
    return true;
}

void DeviceTier::count_restored_locked(const RegionKey &rk, std::uint64_t bytes)
{
    (void)rk;
    chain_->stats.restored_from_device_bytes += bytes;
}

void DeviceTier::restore_to_device(const Key &key, std::size_t index, const DeviceAddress &dst, std::uint64_t dst_size,
                                   const std::function<void(void *)> &restore_to_host)
{
    if (dst.device < 0 || static_cast<std::size_t>(dst.device) >= caches_.size())
        throw Error(-EINVAL, "restore_to_device: no device " + std::to_string(dst.device));
    std::unique_lock<std::mutex> lock(chain_->mu);
    Version *v = chain_->find_locked(key, true);
    if (!v)
        throw Error(-ENOENT,
                    "checkpoint '" + key.first + "' version " + std::to_string(key.second) + " exists on no tier");
    if (index >= v->regions.size() || v->regions[index].size != dst_size)
        throw Error(-EINVAL, "restore_to_device: region " + std::to_string(index) + " of version " +
                                 std::to_string(key.second) + " does not match the destination");
    region_home_[v->regions[index].region] = static_cast<std::size_t>(dst.device);
    const RegionKey rk{key, index};
    if (Copy *copy = ready_copy_locked(lock, rk)) {
        with_pinned_copy_locked(lock, rk, *copy, [&](const std::vector<SegmentAddress> &segments) {
            for (const SegmentAddress &s : segments)
                devices_->copy(s.where, {dst.device, dst.base, dst.offset + s.region_offset}, s.bytes);
        });
        chain_->stats.restored_from_device_bytes += dst_size;
        chain_->stats.restored_into_device_bytes += dst_size;
        chain_->consume_hint_locked(key, index);
        lock.unlock();
        chain_->notify_state();
        return;
    }
    lock.unlock();
    std::unique_ptr<char[]> staging(new char[dst_size]);
    restore_to_host(staging.get());
    devices_->copy({kHostMemory, reinterpret_cast<std::uintptr_t>(staging.get()), 0}, dst, dst_size);
    lock.lock();
    chain_->stats.restored_into_device_bytes += dst_size;
}

// Restore hints reach the device tier: the first hinted region (in rank order) that has a
// home device (where it was captured from or last restored into) and no device copy is read
// back into that device's cache from the first tier after this one holding it (checksums
// verified when that is a disk). Room comes from free slots and from evictable device copies
// that are not needed before it (no hint, or a later one); never from unflushed captures.
void DeviceTier::prefetch_loop()
{
    std::unique_lock<std::mutex> lock(chain_->mu);
    for (;;) {
        if (chain_->stopping)
            return;
        std::size_t device = 0;
        const Chain::HintedRegion next =
            chain_->next_hinted_region_locked([&](const Key &key, Version &v, std::size_t i) {
                auto home = region_home_.find(v.regions[i].region);
                if (home == region_home_.end() || copies_.count({key, i}))
                    return false;
                const DeviceCache &c = caches_[home->second];
                if (c.slots_for(v.regions[i].size) > c.total_slots())
                    return false;  // can never fit that cache
                if (!chain_->held_after_locked(position_, {key, i}, v))
                    return false;  // not readable yet
                device = home->second;
                return true;
            });
        if (next.rank == kNoHint) {
            prefetch_cv_.wait(lock);
            continue;
        }
        const std::uint64_t size = chain_->versions.at(next.key).regions[next.index].size;
        DeviceCache &cache = caches_[device];
        const std::size_t need = static_cast<std::size_t>(cache.slots_for(size));
        // Room without evicting anything needed as soon as the target or sooner.
        if (!make_room_locked(device, need, next.rank + 1)) {
            prefetch_cv_.wait(lock);  // everything on the device is needed sooner
            continue;
        }
        const RegionKey rk{next.key, next.index};
        Copy &copy = copies_[rk];
        copy.order = ++next_order_;
        copy.on_host = true;  // a copy of data a tier after this one holds
        copy.pins = 1;
        for (std::uint64_t at = 0; at < size; at += cache.slot_bytes())
            copy.segments.push_back(
                {static_cast<int>(device), cache.take(), at, std::min<std::uint64_t>(cache.slot_bytes(), size - at)});
        const std::vector<SegmentAddress> segments = addresses_locked(copy);
        ++chain_->active_prefetches;
        bool failed = false;
        try {
            std::unique_ptr<char[]> staging(new char[size]);
            failed = !chain_->read_after_locked(lock, position_, rk, staging.get());
            lock.unlock();
            if (!failed)
                for (const SegmentAddress &s : segments)
                    devices_->copy({kHostMemory, reinterpret_cast<std::uintptr_t>(staging.get() + s.region_offset), 0},
                                   s.where, s.bytes);
        } catch (const std::exception &) {
            failed = true;
        }
        if (!lock.owns_lock())
            lock.lock();
        --chain_->active_prefetches;
        auto it = copies_.find(rk);
        if (failed) {
            // Unreadable: drop it and its hint; the restore reads the disk itself and reports it.
            free_copy_locked(it);
            chain_->drop_hint_locked(next.key);
        } else {
            it->second.pins = 0;
            it->second.ready = true;
            chain_->stats.device_prefetched_bytes += size;
        }
        chain_->state.notify_all();  // a restore may be waiting for this copy
    }
}

}  // namespace hetpu::ckpt
