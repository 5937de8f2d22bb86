// SPDX-License-Identifier: LGPL-2.1-or-later
// Where each part of a group checkpoint goes (no StarPU): the paper's checkpoint load
// balancing applied to the regions of one version that live on the node's devices.
//
// Every region is cut into slots (the device caches' allocation unit). Device i holds
// demand_i slots of checkpoint data and has free_i free slots in its cache; it keeps
// min(demand_i, free_i) locally and the remainder goes, per the selected policy of
// core/peer_schedule.h (min-time max-flow, greedy, or local-only = all to the host), to the
// spare slots of its peers and to the host. The schedule is computed in slot units (link
// bandwidths divided by the slot size), so its whole-unit transfers are exactly slot counts
// and a peer never receives more slots than it has free.
#pragma once

#include "ckpt_backend/core/peer_schedule.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hetpu::ckpt {

enum class PeerPolicy { Flow, Greedy, Local };

struct GroupRegion {
    std::size_t device;  // where its valid copy lives
    std::uint64_t size;  // bytes
};

struct Piece {
    std::size_t region;  // index into the group's regions
    std::uint64_t region_offset, bytes;
    int to;  // a device index, or kHost
};

struct GroupPlacement {
    std::vector<Piece> pieces;  // every byte of every region exactly once, one slot per piece
    PeerProblem problem;        // in slot units (what was scheduled)
    PeerSchedule schedule;      // in slot units
};

// link_bw[i][j]: bytes/s from device i to device j; host_bw[i]: bytes/s from i to the host
// (0: no link). Throws std::invalid_argument on inconsistent shapes, std::runtime_error when
// the remainders cannot be placed (no host link from a device that overflows).
GroupPlacement place_group(const std::vector<GroupRegion> &regions, const std::vector<std::size_t> &free_slots,
                           std::uint64_t slot_bytes, const std::vector<std::vector<double>> &link_bw,
                           const std::vector<double> &host_bw, PeerPolicy policy);

}  // namespace hetpu::ckpt
