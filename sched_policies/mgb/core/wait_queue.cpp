// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sched_policies/mgb/core/wait_queue.h"

#include <algorithm>

namespace hetpu::mgb {

void WaitQueue::push(uint64_t id) { entries_.push_back(Entry{id, 0}); }

bool WaitQueue::remove(uint64_t id)
{
    auto it = std::find_if(entries_.begin(), entries_.end(), [id](const Entry &e) { return e.id == id; });
    if (it == entries_.end())
        return false;
    entries_.erase(it);
    return true;
}

std::vector<uint64_t> WaitQueue::ids() const
{
    std::vector<uint64_t> out;
    out.reserve(entries_.size());
    for (const Entry &e : entries_)
        out.push_back(e.id);
    return out;
}

std::vector<uint64_t> WaitQueue::drain(const std::function<bool(uint64_t)> &try_start)
{
    // Bypass counts never increase from the front to the back: every start that bypasses a
    // task also bypasses all tasks older than it, and new tasks join at the back with 0. So
    // the front entry carries the largest count and is the only one the aging bound must
    // watch. A start only consumes resources, so a task that failed earlier in this walk
    // cannot start later in it: one pass suffices.
    std::vector<uint64_t> started;
    size_t i = 0;
    while (i < entries_.size()) {
        // Past the front means every older task failed to start: a younger one may only
        // backfill while the oldest has not yet been passed over aging_limit times.
        if (i > 0 && entries_.front().bypassed >= aging_limit_)
            break;
        const uint64_t id = entries_[i].id;
        if (!try_start(id)) {
            ++i;
            continue;
        }
        started.push_back(id);
        entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
        for (size_t j = 0; j < i; ++j)  // the older tasks still waiting were bypassed once
            ++entries_[j].bypassed;
    }
    return started;
}

}  // namespace hetpu::mgb
