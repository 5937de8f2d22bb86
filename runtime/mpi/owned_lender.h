// SPDX-License-Identifier: LGPL-2.1-or-later
// The lender role of a rank in a per-node multi-rank run: on the coordinator's order it
// hands the unstarted tail of its share to another rank, sends that range's inputs there
// directly and receives its results back (StarPU-MPI). Decisions: runtime/mpi/core/range_moves.h.
#pragma once

#include "config.h"  // HETPU_HAVE_MPI

#ifdef HETPU_HAVE_MPI

#include <cstdint>
#include <map>
#include <vector>

#include "runtime/mpi/core/owned_messages.h"
#include "runtime/mpi/mpi_block_data.h"
#include "runtime/mpi/owned_context.h"

namespace hetpu {

class Lender {
public:
    explicit Lender(RankContext &rank) : rank_(rank) {}

    // The coordinator's order: the tail of this rank's share goes to g.to. Returns the
    // elements handed over (0: nothing was left to give, the job stopped, or the range's
    // data could not be registered, which fails the job).
    uint64_t give(const WireGive &g);
    // Lent ranges whose results are all home let go of their handles. Whether any did.
    bool settle_returns();
    // Nothing lent is still out. The caller holds run.mutex.
    bool none_out() const { return lent_.empty(); }

private:
    struct Lent {  // a range of this rank's share running elsewhere
        BlockBuffers buffers;
        unsigned pending = 0;  // results still to arrive; guarded by run.mutex
    };
    struct Arrival {
        Lender *lender;
        uint64_t move;
    };
    static void result_arrived(void *arg);  // StarPU-MPI's callback, one per result handle

    RankContext &rank_;
    // Guarded by run.mutex where StarPU-MPI callbacks touch them.
    std::map<uint64_t, Lent> lent_;
    std::vector<uint64_t> home_;  // moves whose results are all in
};

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
