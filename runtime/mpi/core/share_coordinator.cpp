// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/core/share_coordinator.h"

#include <algorithm>

#include "runtime/mpi/core/coordinator_cadence.h"

namespace hetpu {

ShareCoordinator::ShareCoordinator(std::vector<NodeState> nodes, const NodeNetwork &network)
    : nodes_(std::move(nodes)), idle_(nodes_.size(), false), network_(network)
{}

void ShareCoordinator::heard(const WireReport &r)
{
    if (r.rank < 0 || static_cast<size_t>(r.rank) >= nodes_.size())
        return;
    NodeState &n = nodes_[static_cast<size_t>(r.rank)];
    n.in_flight = r.in_flight;
    // A rank's first blocks (a planner's training) run below its speed: its measured
    // rate counts once 2% of its work is done (training is over), or once it ran dry;
    // until then the rate it sustained last time (if any) stands.
    const double work = static_cast<double>(r.done + r.remaining + r.in_flight);
    if (r.rate > 0 && (r.idle || static_cast<double>(r.done) >= 0.02 * work))
        n.rate = r.rate;
    urgent_ = urgent_ || (r.idle != 0 && !idle_[static_cast<size_t>(r.rank)]);
    idle_[static_cast<size_t>(r.rank)] = r.idle != 0;
    if (r.error != 0 && status_ == 0)
        status_ = r.error;
    auto pending = pending_.find(r.move);
    if (pending != pending_.end() && (r.event == kGave || r.event == kArrived)) {
        const Pending p = pending->second;
        if (r.event == kGave && r.moved > 0) {
            pending->second.gave = true;
            ++moves_;
        } else {
            pending_.erase(pending);  // arrived, or nothing was left to give
        }
        refresh_moving(p.from);
        refresh_moving(p.to);
    }
    // The report may predate moves under way: what the rank is still to give is not its
    // own any more, what it is still to receive is (else a stale report undoes the move
    // in the coordinator's view, and the next round orders it again).
    uint64_t giving = 0, receiving = 0;
    for (const auto &[id, p] : pending_) {
        if (p.from == r.rank && !p.gave)
            giving += p.count;
        if (p.to == r.rank)
            receiving += p.count;
    }
    n.remaining = r.remaining - std::min(r.remaining, giving) + receiving;
    dirty_ = true;
}

void ShareCoordinator::refresh_moving(int rank)
{
    bool moving = false;
    for (const auto &[id, p] : pending_)
        moving = moving || (p.from == rank && !p.gave) || p.to == rank;
    nodes_[static_cast<size_t>(rank)].moving = moving;
}

bool ShareCoordinator::start_round(double elapsed_s)
{
    if (stopping_ || !dirty_)
        return false;
    if (!urgent_ && status_ == 0 &&
        elapsed_s - last_round_s_ < round_interval(elapsed_s, static_cast<int>(nodes_.size())))
        return false;
    dirty_ = urgent_ = false;
    last_round_s_ = elapsed_s;
    return true;
}

void ShareCoordinator::lost(int rank)
{
    if (rank < 0 || static_cast<size_t>(rank) >= nodes_.size())
        return;
    NodeState &n = nodes_[static_cast<size_t>(rank)];
    n.failed = true;
    n.remaining = n.in_flight = 0;
    idle_[static_cast<size_t>(rank)] = true;
    std::vector<int> parties;
    for (auto it = pending_.begin(); it != pending_.end();)
        if (it->second.from == rank || it->second.to == rank) {
            parties.push_back(it->second.from);
            parties.push_back(it->second.to);
            it = pending_.erase(it);
        } else {
            ++it;
        }
    for (int p : parties)
        refresh_moving(p);
    dirty_ = urgent_ = true;
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
        pending_[id] = {m.from, m.to, m.count, false};
        NodeState &from = nodes_[static_cast<size_t>(m.from)], &to = nodes_[static_cast<size_t>(m.to)];
        from.moving = to.moving = true;
        from.remaining -= std::min(from.remaining, m.count);
        to.remaining += m.count;
        orders.push_back({id, m});
    }
    return orders;
}

}  // namespace hetpu
