// SPDX-License-Identifier: LGPL-2.1-or-later
#include "runtime/mpi/owned_coordinator.h"

#ifdef HETPU_HAVE_MPI

#include <starpu.h>

namespace hetpu {

bool Coordinator::coordinate()
{
    if (!core_.start_round((starpu_timing_now() - rank_.run.t0_us) * 1e-6))
        return false;
    if (core_.stop_now()) {
        const int status = core_.status();
        for (int r = 0; r < rank_.size; ++r)
            rank_.send(status, r, kTagStop);
        return true;
    }
    const double t0 = starpu_timing_now();
    const std::vector<MoveOrder> orders = core_.plan(rank_.run.dispatcher->rules());
    planning_s_ += (starpu_timing_now() - t0) * 1e-6;
    for (const MoveOrder &o : orders) {
        WireGive g{o.id, o.move.to, 0, o.move.count};
        rank_.send(g, o.move.from, kTagGive);
    }
    return !orders.empty();
}

}  // namespace hetpu

#endif  // HETPU_HAVE_MPI
