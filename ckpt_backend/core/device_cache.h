// SPDX-License-Identifier: LGPL-2.1-or-later
// Bookkeeping of one accelerator's checkpoint cache (no StarPU, no device memory).
//
// The cache memory lives on the device and is allocated one chunk at a time while the
// application runs (incremental initialisation: usable as soon as the first chunk exists,
// and a device that refuses a chunk simply keeps the chunks it gave). Each chunk is cut into
// fixed-size slots and a checkpoint region takes ceil(size / slot) slots anywhere in the
// cache. Slots rather than the host tier's best-fit arena because peer load balancing splits
// a device's checkpoint at arbitrary points between devices: with slots the schedule's unit
// (a slot) is exactly the allocation unit, so a device that was promised k slots of spare
// capacity always has them, whatever the fragmentation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hetpu::ckpt {

struct SlotRef {
    std::size_t chunk;
    std::size_t slot;  // within the chunk
    bool operator==(const SlotRef &o) const { return chunk == o.chunk && slot == o.slot; }
};

class DeviceCache {
public:
    // target_bytes: the configured cache size (rounded down to whole chunks, at least one
    // chunk when target_bytes >= slot_bytes); chunk_bytes: one allocation; slot_bytes divides
    // chunk_bytes. Throws std::invalid_argument on inconsistent sizes.
    DeviceCache(std::uint64_t target_bytes, std::uint64_t chunk_bytes, std::uint64_t slot_bytes);

    // Chunks still to allocate: the target less the chunks present (0 once the target is
    // reached or growth was stopped).
    std::size_t chunks_wanted() const;
    // The memory of the next chunk exists now: its slots become free. Returns its index.
    std::size_t add_chunk();
    // The device refused a chunk: the cache stays at the chunks it has.
    void stop_growing() { growing_ = false; }
    // The device has room again (core/cache_pressure.h): chunks given back may be
    // allocated again, up to the target; new chunks take new indices.
    void resume_growing() { growing_ = true; }
    // Gives a whole chunk back (device memory pressure): every slot of it must be free.
    // The cache stops growing until resume_growing() (a cache that shrank for the
    // application must not take the memory straight back). Its index is never reused, so SlotRefs of other chunks stay valid.
    // Throws std::invalid_argument for an absent chunk or one with a taken slot.
    void remove_chunk(std::size_t chunk);
    bool chunk_present(std::size_t chunk) const { return chunk < present_.size() && present_[chunk]; }
    // Taken slots of a present chunk.
    std::size_t chunk_used_slots(std::size_t chunk) const;

    std::size_t chunk_count() const { return chunks_; }  // chunks ever added (indices)
    std::size_t live_chunks() const { return live_; }    // chunks present now
    std::size_t total_slots() const { return live_ * slots_per_chunk_; }
    std::size_t free_slots() const { return free_.size(); }
    std::uint64_t slot_bytes() const { return slot_bytes_; }
    std::uint64_t chunk_bytes() const { return slots_per_chunk_ * slot_bytes_; }
    std::uint64_t slots_for(std::uint64_t bytes) const { return (bytes + slot_bytes_ - 1) / slot_bytes_; }
    // Byte offset of a slot inside its chunk.
    std::uint64_t offset_of(const SlotRef &s) const { return s.slot * slot_bytes_; }

    // Takes one free slot (lowest chunk, lowest slot first, so early chunks fill first);
    // throws std::length_error when none is free.
    SlotRef take();
    // Returns a slot obtained from take(); throws std::invalid_argument for a slot that is
    // not taken (double free, unknown chunk).
    void give_back(const SlotRef &s);

private:
    std::uint64_t slot_bytes_;
    std::size_t slots_per_chunk_, planned_chunks_, chunks_ = 0, live_ = 0;
    bool growing_ = true;
    std::vector<bool> present_;             // [chunk]: false once removed
    std::vector<SlotRef> free_;             // kept sorted descending, so back() is the lowest
    std::vector<std::vector<bool>> taken_;  // [chunk][slot]
};

}  // namespace hetpu::ckpt
