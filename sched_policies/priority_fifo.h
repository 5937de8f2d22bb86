// SPDX-License-Identifier: LGPL-2.1-or-later
// A queue ordered by priority (highest first), in arrival order within one priority, from
// which a consumer takes the first item it accepts: a worker takes the most urgent task it
// can run, and a task only another kind of worker can run never blocks those behind it.
// Pure C++: the StarPU component around it is shared_priority_queue.cpp.
#ifndef HETPU_SCHED_POLICIES_PRIORITY_FIFO_H
#define HETPU_SCHED_POLICIES_PRIORITY_FIFO_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>

namespace hetpu {

template <typename T> class PriorityFifo {
public:
    // Where an item stands: its priority, then its arrival.
    struct Place {
        int priority;
        std::uint64_t arrival;
        bool operator<(const Place &o) const
        {
            return priority != o.priority ? priority > o.priority : arrival < o.arrival;
        }
    };
    using Entry = std::pair<Place, T>;

    void push(int priority, T item) { items_.emplace(Place{priority, next_arrival_++}, std::move(item)); }

    // The first item (by priority, then arrival) that `accepts` takes, removed; none if no item
    // is accepted. Visits items in order and stops at the first accepted one.
    template <typename Accepts> std::optional<Entry> take_first(Accepts &&accepts)
    {
        for (auto it = items_.begin(); it != items_.end(); ++it)
            if (accepts(it->second)) {
                Entry e{it->first, std::move(it->second)};
                items_.erase(it);
                return e;
            }
        return std::nullopt;
    }

    [[nodiscard]] std::size_t size() const { return items_.size(); }
    [[nodiscard]] bool empty() const { return items_.empty(); }

private:
    std::map<Place, T> items_;
    std::uint64_t next_arrival_ = 0;
};

}  // namespace hetpu

#endif
