// SPDX-License-Identifier: LGPL-2.1-or-later
// The queue between a tier and its background threads (flushes to the next tier, copies from
// the tier before): the items waiting, how many are being worked on, and the threads'
// wake-up. Guarded by the chain's lock (Chain::mu).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace hetpu::ckpt {

template <class Item> class WorkQueue {
public:
    // Queues an item; wake_one() then starts a thread on it (after the lock is released, so
    // that the thread does not wake into a held lock).
    void push_locked(Item item) { items_.push_back(std::move(item)); }
    void wake_one() { wake_.notify_one(); }
    void wake_all() { wake_.notify_all(); }
    // Waits for the next item and counts it in flight until done_locked(); nothing once
    // `stopping` is set and the queue is empty (the thread ends).
    std::optional<Item> take_locked(std::unique_lock<std::mutex> &lock, const bool &stopping)
    {
        wake_.wait(lock, [&] { return stopping || !items_.empty(); });
        if (items_.empty())
            return std::nullopt;
        Item item = std::move(items_.front());
        items_.pop_front();
        ++in_flight_;
        return item;
    }
    void done_locked() { --in_flight_; }
    bool idle_locked() const { return items_.empty() && in_flight_ == 0; }

private:
    std::deque<Item> items_;
    std::size_t in_flight_ = 0;
    std::condition_variable wake_;
};

}  // namespace hetpu::ckpt
