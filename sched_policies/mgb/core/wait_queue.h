// SPDX-License-Identifier: LGPL-2.1-or-later
// Tasks that fit no device yet, started in arrival order with backfilling and an aging
// bound. When resources free, the queue is walked oldest first; a task that still does not
// fit is passed over and a later one that fits may start (backfilling keeps devices busy).
// Each such start counts as one bypass of every older task still waiting; once the oldest
// waiting task has been bypassed `aging_limit` times, nothing younger may start before it,
// so a large task is never starved by a stream of small ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

namespace hetpu::mgb {

class WaitQueue {
public:
    explicit WaitQueue(unsigned aging_limit = 16) : aging_limit_(aging_limit) {}

    void push(uint64_t id);
    bool remove(uint64_t id);
    bool empty() const { return entries_.empty(); }
    size_t size() const { return entries_.size(); }
    std::vector<uint64_t> ids() const;                                              // arrival order
    uint64_t oldest() const { return entries_.empty() ? 0 : entries_.front().id; }  // 0: empty
    unsigned aging_limit() const { return aging_limit_; }

    // try_start(id) starts the task and returns true, or returns false when it cannot
    // start now. Returns the ids started, in the order they started.
    std::vector<uint64_t> drain(const std::function<bool(uint64_t)> &try_start);

private:
    struct Entry {
        uint64_t id;
        unsigned bypassed;
    };
    std::deque<Entry> entries_;
    unsigned aging_limit_;
};

}  // namespace hetpu::mgb
