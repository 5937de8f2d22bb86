// SPDX-License-Identifier: LGPL-2.1-or-later
// The control messages of the per-node multi-rank runner (runtime/mpi/mpi_owned_run.cpp),
// sent as bytes on hetpu's control communicator (every rank runs the same binary). Data
// never travel in them: they go with StarPU-MPI, under the tags move_tag() gives. Pure C++.
#pragma once

#include <cstdint>

namespace hetpu {

constexpr int kTagReport = 11;  // rank -> coordinator
constexpr int kTagGive = 12;    // coordinator -> lender
constexpr int kTagTake = 13;    // lender -> borrower (directly)
constexpr int kTagStop = 14;    // coordinator -> every rank

enum ReportEvent : int32_t { kProgress = 0, kGave = 1, kArrived = 2 };

struct WireReport {
    int32_t rank;
    int32_t event;   // ReportEvent
    uint64_t move;   // kGave, kArrived: which move
    uint64_t moved;  // kGave: elements handed over (0: nothing was left to give)
    uint64_t done;   // elements this rank's workers finished
    uint64_t remaining;
    uint64_t in_flight;
    double elapsed_s;
    // Its workers' speeds on their last blocks, summed: what the node sustains now (a
    // planner's first, small blocks run slower; done / elapsed undercounts running blocks).
    double rate;
    int32_t idle;   // nothing left, nothing running, no borrowed result still to send
    int32_t error;  // 0 or -errno: the job must stop
};

// Coordinator -> lender: hand the last `count` unstarted elements of your share to `to`.
struct WireGive {
    uint64_t move;
    int32_t to;
    int32_t pad;
    uint64_t count;
};

// Lender -> borrower: [offset, offset + count) is yours to run; its inputs follow.
struct WireTake {
    uint64_t move;
    int32_t from;
    int32_t pad;
    uint64_t offset;
    uint64_t count;
};

// StarPU-MPI data tags of a move: its inputs one way, its results the other.
inline int64_t move_tag(uint64_t move, bool results, unsigned index)
{
    return static_cast<int64_t>((move * 2 + (results ? 1 : 0)) * 32 + index);
}

}  // namespace hetpu
