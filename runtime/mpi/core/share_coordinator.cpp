// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/share_coordinator.h"

#include <algorithm>

namespace hetpu {

ShareCoordinator::ShareCoordinator(std::vector<NodeState> nodes, const NodeNetwork &network)
    : nodes_(std::move(nodes)), idle_(nodes_.size(), false), network_(network)
{}

void ShareCoordinator::heard(const WireReport &r)
{
    if (r.rank < 0 || static_cast<size_t>(r.rank) >= nodes_.size())
        return;
    NodeState &n = nodes_[static_cast<size_t>(r.rank)];
    n.remaining = r.remaining;
    n.in_flight = r.in_flight;
    // A rank's first blocks (a planner's training) run below its speed: its measured
    // rate counts once 2% of its work is done (training is over), or once it ran dry;
    // until then the rate it sustained last time (if any) stands.
    const double work = static_cast<double>(r.done + r.remaining + r.in_flight);
    if (r.rate > 0 && (r.idle || static_cast<double>(r.done) >= 0.02 * work))
        n.rate = r.rate;
    idle_[static_cast<size_t>(r.rank)] = r.idle != 0;
    if (r.error != 0 && status_ == 0)
        status_ = r.error;
    auto pending = pending_.find(r.move);
    if (r.event == kGave && pending != pending_.end()) {
        nodes_[static_cast<size_t>(pending->second.first)].moving = false;
        if (r.moved == 0) {
            nodes_[static_cast<size_t>(pending->second.second)].moving = false;
            pending_.erase(pending);
        } else {
            ++moves_;
        }
    } else if (r.event == kArrived && pending != pending_.end()) {
        nodes_[static_cast<size_t>(pending->second.second)].moving = false;
        pending_.erase(pending);
    }
    dirty_ = true;
}

bool ShareCoordinator::start_round()
{
    if (stopping_ || !dirty_)
        return false;
    dirty_ = false;
    return true;
}

bool ShareCoordinator::stop_now()
{
    const bool all_idle = std::all_of(idle_.begin(), idle_.end(), [](bool i) { return i; });
    if (status_ != 0 || (all_idle && pending_.empty()))
        stopping_ = true;
    return stopping_;
}

std::vector<MoveOrder> ShareCoordinator::plan(const BlockRules &rules)
{
    std::vector<MoveOrder> orders;
    for (const ShareMove &m : plan_moves(nodes_, network_, rules)) {
        const uint64_t id = next_move_++;
        pending_[id] = {m.from, m.to};
        NodeState &from = nodes_[static_cast<size_t>(m.from)], &to = nodes_[static_cast<size_t>(m.to)];
        from.moving = to.moving = true;
        from.remaining -= std::min(from.remaining, m.count);
        to.remaining += m.count;
        orders.push_back({id, m});
    }
    return orders;
}

}  // namespace hetpu
