// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ckpt_backend/core/group_placement.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace hetpu::ckpt {

GroupPlacement place_group(const std::vector<GroupRegion> &regions, const std::vector<std::size_t> &free_slots,
                           std::uint64_t slot_bytes, const std::vector<std::vector<double>> &link_bw,
                           const std::vector<double> &host_bw, PeerPolicy policy)
{
    const std::size_t n = free_slots.size();
    if (slot_bytes == 0)
        throw std::invalid_argument("place_group: slot size 0");
    if (link_bw.size() != n || host_bw.size() != n)
        throw std::invalid_argument("place_group: bandwidth tables do not match the device count");
    // Each device's checkpoint as a list of slot-sized pieces, in region order.
    std::vector<std::vector<Piece>> own(n);
    for (std::size_t r = 0; r < regions.size(); ++r) {
        if (regions[r].device >= n)
            throw std::invalid_argument("place_group: region " + std::to_string(r) + " is on device " +
                                        std::to_string(regions[r].device) + " of " + std::to_string(n));
        for (std::uint64_t at = 0; at < regions[r].size; at += slot_bytes)
            own[regions[r].device].push_back(
                {r, at, std::min(slot_bytes, regions[r].size - at), static_cast<int>(regions[r].device)});
    }
    GroupPlacement out;
    PeerProblem &p = out.problem;
    p.remainder.resize(n);
    p.spare.resize(n);
    p.link_bw.assign(n, std::vector<double>(n, 0.0));
    p.host_bw.resize(n);
    std::vector<std::size_t> kept(n);
    for (std::size_t i = 0; i < n; ++i) {
        kept[i] = std::min(own[i].size(), free_slots[i]);
        p.remainder[i] = own[i].size() - kept[i];
        p.spare[i] = free_slots[i] - kept[i];
        for (std::size_t j = 0; j < n; ++j)
            p.link_bw[i][j] = i == j ? 0.0 : link_bw[i][j] / static_cast<double>(slot_bytes);
        p.host_bw[i] = host_bw[i] / static_cast<double>(slot_bytes);
    }
    bool overflow = false;
    for (std::uint64_t r : p.remainder)
        overflow = overflow || r > 0;
    if (overflow) {
        validate(p);
        out.schedule = policy == PeerPolicy::Flow     ? schedule_min_time_max_flow(p)
                       : policy == PeerPolicy::Greedy ? schedule_greedy(p)
                                                      : schedule_local_only(p);
        if (!out.schedule.feasible)
            throw std::runtime_error("place_group: the devices' remainders cannot be placed (a device without a "
                                     "host link overflows its cache)");
    } else {
        out.schedule.feasible = true;
    }
    // Kept pieces first, then each transfer takes the device's next pieces.
    std::vector<std::size_t> next = kept;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < kept[i]; ++k)
            out.pieces.push_back(own[i][k]);
    for (const Transfer &t : out.schedule.transfers) {
        const std::size_t from = static_cast<std::size_t>(t.from);
        for (std::uint64_t k = 0; k < t.bytes; ++k) {
            if (next[from] >= own[from].size())
                throw std::logic_error("place_group: the schedule ships more than the remainder");
            Piece piece = own[from][next[from]++];
            piece.to = t.to;
            out.pieces.push_back(piece);
        }
    }
    for (std::size_t i = 0; i < n; ++i)
        if (next[i] != own[i].size())
            throw std::logic_error("place_group: the schedule left part of a remainder unplaced");
    return out;
}

}  // namespace hetpu::ckpt
