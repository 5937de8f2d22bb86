// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/device_cache.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace hetpu::ckpt {

namespace {
bool after(const SlotRef &a, const SlotRef &b) { return a.chunk != b.chunk ? a.chunk > b.chunk : a.slot > b.slot; }
}  // namespace

DeviceCache::DeviceCache(std::uint64_t target_bytes, std::uint64_t chunk_bytes, std::uint64_t slot_bytes)
    : slot_bytes_(slot_bytes)
{
    if (slot_bytes == 0 || chunk_bytes == 0)
        throw std::invalid_argument("device cache: chunk and slot sizes must be > 0");
    if (chunk_bytes % slot_bytes != 0)
        throw std::invalid_argument("device cache: the chunk size (" + std::to_string(chunk_bytes) +
                                    ") must be a multiple of the slot size (" + std::to_string(slot_bytes) + ")");
    slots_per_chunk_ = chunk_bytes / slot_bytes;
    // A target smaller than one chunk still gets one (smaller) chunk's worth of slots: the
    // cache then is one chunk of target_bytes rounded down to slots.
    if (target_bytes < chunk_bytes) {
        slots_per_chunk_ = target_bytes / slot_bytes;
        planned_chunks_ = slots_per_chunk_ > 0 ? 1 : 0;
    } else {
        planned_chunks_ = target_bytes / chunk_bytes;
    }
}

std::size_t DeviceCache::chunks_wanted() const { return growing_ ? planned_chunks_ - live_ : 0; }

std::size_t DeviceCache::add_chunk()
{
    if (chunks_wanted() == 0)
        throw std::logic_error("device cache: no chunk is wanted");
    const std::size_t c = chunks_++;
    ++live_;
    present_.push_back(true);
    taken_.emplace_back(slots_per_chunk_, false);
    for (std::size_t s = 0; s < slots_per_chunk_; ++s)
        free_.push_back({c, s});
    std::sort(free_.begin(), free_.end(), after);
    return c;
}

SlotRef DeviceCache::take()
{
    if (free_.empty())
        throw std::length_error("device cache: no free slot");
    const SlotRef s = free_.back();
    free_.pop_back();
    taken_[s.chunk][s.slot] = true;
    return s;
}

void DeviceCache::give_back(const SlotRef &s)
{
    if (!chunk_present(s.chunk) || s.slot >= slots_per_chunk_ || !taken_[s.chunk][s.slot])
        throw std::invalid_argument("device cache: slot " + std::to_string(s.chunk) + "/" + std::to_string(s.slot) +
                                    " is not taken");
    taken_[s.chunk][s.slot] = false;
    free_.insert(std::upper_bound(free_.begin(), free_.end(), s, after), s);
}

std::size_t DeviceCache::chunk_used_slots(std::size_t chunk) const
{
    if (!chunk_present(chunk))
        return 0;
    return static_cast<std::size_t>(std::count(taken_[chunk].begin(), taken_[chunk].end(), true));
}

void DeviceCache::remove_chunk(std::size_t chunk)
{
    if (!chunk_present(chunk))
        throw std::invalid_argument("device cache: chunk " + std::to_string(chunk) + " is not present");
    if (chunk_used_slots(chunk) != 0)
        throw std::invalid_argument("device cache: chunk " + std::to_string(chunk) + " still holds " +
                                    std::to_string(chunk_used_slots(chunk)) + " taken slot(s)");
    free_.erase(std::remove_if(free_.begin(), free_.end(), [&](const SlotRef &s) { return s.chunk == chunk; }),
                free_.end());
    present_[chunk] = false;
    --live_;
    growing_ = false;
}

}  // namespace hetpu::ckpt
