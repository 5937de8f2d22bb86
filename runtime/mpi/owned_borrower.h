// SPDX-License-Identifier: LGPL-2.1-or-later
// The borrower role of a rank in a per-node multi-rank run: it holds a range another rank
// lends it, receives that range's inputs directly from the lender (StarPU-MPI), runs its
// blocks beside its own share and sends the results back once all are home. Decisions:
// runtime/mpi/core/range_moves.h.
#pragma once

#include "config.h"  // HETPU_HAVE_MPI

#ifdef HETPU_HAVE_MPI

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "runtime/mpi/core/owned_messages.h"
#include "runtime/mpi/core/range_moves.h"
#include "runtime/mpi/mpi_block_data.h"
#include "runtime/mpi/owned_context.h"

namespace hetpu {

class Borrower {
public:
    explicit Borrower(RankContext &rank) : rank_(rank) {}

    // The lender's message: [t.offset, t.offset + t.count) is this rank's to run; its
    // inputs are on their way. A range this rank cannot hold fails the job.
    void take(const WireTake &t, int from);
    // Borrowed ranges whose inputs are in join this rank's work; `arrived(move)` after
    // each (the coordinator hears of it). Whether any did.
    bool settle_arrivals(const std::function<void(uint64_t)> &arrived);
    // Borrowed ranges all of whose results are home go back to their owners (at once
    // after a failed job, whatever they hold, so the owner's wait ends). Whether any
    // result came home or any range went back.
    bool return_finished_ranges();
    // Nothing borrowed is on its way or running here, and no borrowed room is left to
    // release. The caller holds run.mutex.
    bool none_held() const { return incoming_.empty() && borrowed_.empty() && to_release_.empty(); }

private:
    struct Incoming {  // a borrowed range whose inputs are on their way
        int from = -1;
        Block range;
        BlockBuffers buffers;
        unsigned pending = 0;  // guarded by run.mutex
    };
    struct Arrival {
        Borrower *borrower;
        uint64_t move;
    };
    static void input_arrived(void *arg);  // StarPU-MPI's callback, one per input handle

    RankContext &rank_;
    // Guarded by run.mutex where StarPU-MPI callbacks touch them.
    std::map<uint64_t, Incoming> incoming_;
    BorrowedRanges borrowed_;
    std::vector<uint64_t> inputs_in_;  // moves whose inputs are all in
    // Ranges returned to their owners whose room is released once no task of this rank
    // runs in them any more (a losing backup copy may still read its inputs there).
    std::vector<Block> to_release_;
    bool release_idle_ranges();
};

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
